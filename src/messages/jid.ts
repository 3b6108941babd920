// Recipient numbers to messenger addresses, as Evolution normalises them (§8.1 of the behaviour reference).
import { badRequest } from '../api/errors.js';

const fullAddress = /@(g\.us|s\.whatsapp\.net|lid|broadcast|newsletter)$/;

/** Turns a `number` field into an address; throws a 400 naming the field when it cannot be one. */
export function toJid(input: string, field = 'number'): string {
  let value = input.trim().replace(/:\d+(?=@|$)/, '');
  if (fullAddress.test(value)) return value;
  value = value.replace(/[\s+()]/g, '').replace(/[:@].*$/, '');
  if (value.includes('-') && value.length >= 24) {
    const group = value.replace(/[^\d-]/g, '');
    if (/^\d+-\d+$/.test(group)) return `${group}@g.us`;
  }
  let digits = value.replace(/\D/g, '');
  if (digits.length < 5 || digits.length > 24) {
    throw badRequest(
      `${field} must be a phone number with country code (5 to 15 digits, e.g. 5511999999999), a group id or a full address such as 5511999999999@s.whatsapp.net`,
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

export function isGroupJid(jid: string): boolean {
  return jid.endsWith('@g.us');
}

export const statusBroadcastJid = 'status@broadcast';
