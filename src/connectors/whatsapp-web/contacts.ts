// Which numbers have a WhatsApp account: Baileys' existence query, its answers matched back to the numbers asked.
import type { NumberCheck } from '../../core/connector.js';
import { otherSpellings } from '../../messages/number-spellings.js';
import { isLid, isPhoneJid } from './jids.js';

export interface ContactsSocket {
  /** Baileys 7 answers an account's @lid address beside its phone one (`lid`) when WhatsApp gives it. */
  onWhatsApp(...phoneNumber: string[]): Promise<{ jid: string; exists: boolean; lid?: unknown }[] | undefined>;
}

/** The digits of a phone address and its other spellings (Brazil's ninth digit, Mexico's `1`, Argentina's `9`). */
function spellings(jid: string): string[] {
  const digits = jid.split('@')[0] ?? '';
  return [digits, ...otherSpellings(digits)];
}

/** What `checkNumbers` knows of @lid addresses. */
export interface KnownAddresses {
  phoneOf(lid: string): Promise<string | null>;
  alternateOf(jid: string): string | null;
  remember(lid: string, phone: string): void;
}

/** For a check that needs no @lid address (the account is asked by its phone address). */
export const noKnownAddresses: KnownAddresses = { phoneOf: async () => null, alternateOf: () => null, remember: () => {} };

/**
 * One answer per request, in order. Phone addresses go to WhatsApp in one query (it answers only the existing
 * accounts, by their own spelling); an @lid address exists (only accounts have one), with its phone address when known.
 * An existing account's answer carries both of its addresses when known (`jid` the phone one, `lid` the other).
 */
export async function checkNumbers(socket: ContactsSocket, addresses: KnownAddresses, requests: { number: string; jid: string }[]): Promise<NumberCheck[]> {
  const phones = requests.filter((r) => isPhoneJid(r.jid)).map((r) => r.jid);
  const found = phones.length > 0 ? ((await socket.onWhatsApp(...phones)) ?? []) : [];
  return Promise.all(
    requests.map(async ({ number, jid }): Promise<NumberCheck> => {
      if (isLid(jid)) {
        const phone = await addresses.phoneOf(jid);
        return { exists: true, jid: phone ?? jid, number, lid: jid };
      }
      const forms = spellings(jid);
      const match = found.find((answer) => answer.exists && forms.includes(answer.jid.split('@')[0]?.split(':')[0] ?? ''));
      if (!match) return { exists: false, jid, number };
      if (typeof match.lid === 'string' && isLid(match.lid)) addresses.remember(match.lid, match.jid);
      const lid = addresses.alternateOf(match.jid);
      return { exists: true, jid: match.jid, number, ...(lid ? { lid } : {}) };
    }),
  );
}
