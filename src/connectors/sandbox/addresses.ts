// Phone numbers and user addresses on the sandbox network: parsing, validation, the address form and the @lid form.
import { createHash } from 'node:crypto';
import { otherSpellings } from '../../messages/number-spellings.js';

/** The server part of a user address, as WhatsApp writes it. */
const USER_SERVER = 's.whatsapp.net';
export const STATUS_BROADCAST = 'status@broadcast';

export const NUMBER_RULE = 'number must be 5 to 15 digits (a leading "+", spaces and dashes are ignored)';

/** The digits of a phone number typed by a person, or null when it breaks the 5–15 digit rule. */
export function parseNumber(value: string): string | null {
  const digits = value.replace(/[+\s-]/g, '');
  return /^\d{5,15}$/.test(digits) ? digits : null;
}

export function userJid(digits: string): string {
  return `${digits}@${USER_SERVER}`;
}

/**
 * A user address from a number or an address (`5511…@s.whatsapp.net`, `…@c.us`, with or without a
 * `:device` suffix); null for anything else (groups, broadcast lists, malformed input).
 */
export function parseUserAddress(value: string): string | null {
  const at = value.indexOf('@');
  if (at === -1) {
    const digits = parseNumber(value);
    return digits === null ? null : userJid(digits);
  }
  const server = value.slice(at + 1);
  if (server !== USER_SERVER && server !== 'c.us') return null;
  const user = value.slice(0, at).split(':')[0];
  return /^\d{5,15}$/.test(user) ? userJid(user) : null;
}

/**
 * The address and every other spelling of the same account (`otherSpellings`). Senders' numbers are normalised to the
 * short form (as Evolution does), so the network must find an account linked with the long form too, and the other
 * way round.
 */
export function accountForms(address: string): string[] {
  return [address, ...sameAccountForms(address)];
}

function sameAccountForms(address: string): string[] {
  const at = address.indexOf('@');
  if (at === -1 || address.slice(at + 1) !== USER_SERVER) return [];
  return otherSpellings(address.slice(0, at)).map(userJid);
}

/** Whether `jid` is an @lid address (WhatsApp's privacy address of an account), device suffix allowed. */
export function isLidAddress(jid: string): boolean {
  return /^\d{1,20}(:\d+)?@lid$/.test(jid);
}

/** An @lid address without its device suffix. */
export function lidWithoutDevice(jid: string): string {
  return jid.replace(/:\d+(?=@lid$)/, '');
}

/**
 * The @lid address of the sandbox account at `ownerJid`. WhatsApp gives every account a second address that does not
 * show its number; the sandbox derives one from the number (15 digits, stable across restarts, never the number).
 */
export function sandboxLid(ownerJid: string): string {
  let lid = lids.get(ownerJid);
  if (lid === undefined) {
    const digest = createHash('sha256').update(`sandbox-lid:${ownerJid}`).digest();
    const digits = (digest.readBigUInt64BE(0) % 900_000_000_000_000n) + 100_000_000_000_000n;
    lid = `${digits}@lid`;
    if (lids.size >= maxKeptLids) lids.clear();
    lids.set(ownerJid, lid);
  }
  return lid;
}

/** @lid addresses by owner address: every sandbox send asks for one or two (hashing each time showed in profiles). */
const lids = new Map<string, string>();
const maxKeptLids = 10_000;
