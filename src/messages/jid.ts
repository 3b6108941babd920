// Recipient numbers to messenger addresses, as Evolution normalises them (§8.1 of the behaviour reference).
import { invalidInput } from '../core/errors.js';

const fullAddress = /@(g\.us|s\.whatsapp\.net|lid|broadcast|newsletter)$/;

/** What may stand before the `@` of a full address, by server: an address with anything else reaches nobody. */
const userParts: Record<string, { pattern: RegExp; rule: string }> = {
  's.whatsapp.net': { pattern: /^\d{5,24}$/, rule: 'a phone number with country code' },
  'g.us': { pattern: /^\d+(-\d+)?$/, rule: 'a group id (digits, or digits-digits)' },
  lid: { pattern: /^\d+$/, rule: 'digits' },
  broadcast: { pattern: /^(status|\d+)$/, rule: '"status" or a broadcast list id' },
  newsletter: { pattern: /^\d+$/, rule: 'digits' },
};

/** Turns a `number` field into an address; throws a 400 naming the field when it cannot be one. */
export function toJid(input: string, field = 'number'): string {
  let value = input.trim().replace(/:\d+(?=@|$)/, '');
  const server = fullAddress.exec(value)?.[1];
  if (server !== undefined) {
    const user = value.slice(0, value.length - server.length - 1);
    const { pattern, rule } = userParts[server];
    if (!pattern.test(user)) throw invalidInput(`${field} "${value}" is not an address: before @${server} must come ${rule}`);
    return value;
  }
  value = value.replace(/[\s+()]/g, '').replace(/[:@].*$/, '');
  if (value.includes('-') && value.length >= 24) {
    const group = value.replace(/[^\d-]/g, '');
    if (/^\d+-\d+$/.test(group)) return `${group}@g.us`;
  }
  let digits = value.replace(/\D/g, '');
  if (digits.length < 5 || digits.length > 24) {
    throw invalidInput(
      `${field} must be a phone number with country code (5 to 17 digits, e.g. 5511999999999), a group id (18 digits or more) or a full address such as 5511999999999@s.whatsapp.net`,
    );
  }
  if (digits.length >= 18) return `${digits}@g.us`;
  if ((digits.startsWith('52') || digits.startsWith('54')) && digits.length === 13) {
    digits = digits.slice(0, 2) + digits.slice(3);
  } else if (digits.startsWith('55') && digits.length === 13) {
    const ddd = Number(digits.slice(2, 4));
    const firstOfLocal = Number(digits[5]);
    if (ddd >= 31 && firstOfLocal >= 7) digits = digits.slice(0, 4) + digits.slice(5);
  }
  return `${digits}@s.whatsapp.net`;
}

export const statusBroadcastJid = 'status@broadcast';

/** The recipient of a chat message: any address but the status feed, which has its own route and audience. */
export function recipientJid(input: string, field = 'number'): string {
  const jid = toJid(input, field);
  if (jid === statusBroadcastJid)
    throw invalidInput(`${field} ${statusBroadcastJid} is the status feed: post statuses with /message/sendStatus, which takes their audience`);
  return jid;
}

/** One viewer of a status: a person (a number, or a user or LID address); groups, lists and feeds see no statuses. */
export function statusViewerJid(input: string, field: string): string {
  const jid = toJid(input, field);
  if (!jid.endsWith('@s.whatsapp.net') && !jid.endsWith('@lid')) {
    throw invalidInput(
      `${field} "${input}" is not a person: a status is shown to people (phone numbers or their addresses), not to groups, lists or the status feed`,
    );
  }
  return jid;
}
