// Which numbers have a WhatsApp account: Baileys' existence query, its answers matched back to the numbers asked.
import type { NumberCheck } from '../../core/connector.js';
import { otherSpellings } from '../../messages/number-spellings.js';
import { isLid, isPhoneJid } from './jids.js';

export interface ContactsSocket {
  onWhatsApp(...phoneNumber: string[]): Promise<{ jid: string; exists: boolean }[] | undefined>;
}

/** The digits of a phone address and its other spellings (Brazil's ninth digit, Mexico's `1`, Argentina's `9`). */
function spellings(jid: string): string[] {
  const digits = jid.split('@')[0] ?? '';
  return [digits, ...otherSpellings(digits)];
}

/**
 * One answer per request, in order. Phone addresses go to WhatsApp in one query (it answers only the existing
 * accounts, by their own spelling); an @lid address exists (only accounts have one), with its phone address when known.
 */
export async function checkNumbers(
  socket: ContactsSocket,
  phoneOf: (lid: string) => Promise<string | null>,
  requests: { number: string; jid: string }[],
): Promise<NumberCheck[]> {
  const phones = requests.filter((r) => isPhoneJid(r.jid)).map((r) => r.jid);
  const found = phones.length > 0 ? ((await socket.onWhatsApp(...phones)) ?? []) : [];
  return Promise.all(
    requests.map(async ({ number, jid }): Promise<NumberCheck> => {
      if (isLid(jid)) {
        const phone = await phoneOf(jid);
        return { exists: true, jid: phone ?? jid, number, lid: jid };
      }
      const forms = spellings(jid);
      const match = found.find((answer) => answer.exists && forms.includes(answer.jid.split('@')[0]?.split(':')[0] ?? ''));
      return match ? { exists: true, jid: match.jid, number } : { exists: false, jid, number };
    }),
  );
}
