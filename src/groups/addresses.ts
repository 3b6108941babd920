// Group addresses and invite codes as the group routes take them (Evolution's rules, with clearer refusals).
import { invalidInput } from '../core/errors.js';
import { toJid } from '../messages/jid.js';

const groupAddress = /^\d+(-\d+)?@g\.us$/;
const inviteCodePattern = /^[a-zA-Z0-9]{22}$/;

export const inviteLinkPrefix = 'https://chat.whatsapp.com/';

/**
 * The group a request names: `groupJid` of the body, else of the query (upstream's order); "@g.us" appended when
 * missing. Absent or not a group id: a 400 saying what to send.
 */
export function requestedGroup(fromBody: string | undefined, fromQuery: string | undefined): string {
  const given = (fromBody ?? fromQuery)?.trim();
  if (given === undefined || given === '') {
    throw invalidInput('The group id needs to be informed in the query', 'ex: "groupJid=120362@g.us"');
  }
  return groupJid(given, 'groupJid', true);
}

/** A group address; `suffix`: "@g.us" may be left out (the routes that take it from the query). */
export function groupJid(value: string, field: string, suffix: boolean): string {
  const jid = suffix && !value.includes('@') ? `${value}@g.us` : value;
  if (!groupAddress.test(jid)) {
    throw invalidInput(`${field} "${value}" is not a group id: digits (or digits-digits) followed by @g.us, e.g. 120363012345678901@g.us`);
  }
  return jid;
}

/** The invite code of the query: the 22 letters and digits of a `chat.whatsapp.com` link (the link itself is taken too). */
export function requestedInviteCode(value: string | undefined): string {
  const given = value?.trim();
  if (given === undefined || given === '') {
    throw invalidInput('The group invite code id needs to be informed in the query', 'ex: "inviteCode=F1EX5QZxO181L3TMVP31gY" (Obtained from group join link)');
  }
  const code = given.startsWith(inviteLinkPrefix) ? given.slice(inviteLinkPrefix.length) : given;
  if (!inviteCodePattern.test(code)) {
    throw invalidInput(`inviteCode "${given}" is not an invite code: the 22 letters and digits after ${inviteLinkPrefix}`);
  }
  return code;
}

/** A person to add, remove, promote or demote: a phone number or a person's address; anything else names its field. */
function personJid(value: string, field: string): string {
  const jid = toJid(value, field);
  if (!jid.endsWith('@s.whatsapp.net') && !jid.endsWith('@lid')) {
    throw invalidInput(`${field} "${value}" is not a person: give a phone number with country code or a person's address`);
  }
  return jid;
}

/** The people of a list field, each checked, without repeats (a repeat is a 400, as upstream's `uniqueItems`). */
export function peopleOf(values: readonly string[], field: string): string[] {
  const jids = values.map((value, i) => personJid(value, `${field}[${i}]`));
  if (new Set(jids).size !== jids.length) throw invalidInput(`${field} must not name the same person twice`);
  return jids;
}
