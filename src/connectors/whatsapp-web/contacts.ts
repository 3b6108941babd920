// Which numbers have a WhatsApp account: Baileys' existence query, its answers matched back to the numbers asked.
import type { NumberCheck } from '../../core/connector.js';
import { isLid, isPhoneJid } from './jids.js';

export interface ContactsSocket {
  onWhatsApp(...phoneNumber: string[]): Promise<{ jid: string; exists: boolean }[] | undefined>;
}

/** The digits of a phone address and its other spellings (Brazil's ninth digit, Mexico's `1`, Argentina's `9`). */
function spellings(jid: string): string[] {
  const digits = jid.split('@')[0] ?? '';
  const forms = [digits];
  if (digits.startsWith('55')) {
    if (digits.length === 13 && digits[4] === '9') forms.push(digits.slice(0, 4) + digits.slice(5));
    if (digits.length === 12) forms.push(`${digits.slice(0, 4)}9${digits.slice(4)}`);
  } else if (digits.startsWith('52') || digits.startsWith('54')) {
    const extra = digits.startsWith('52') ? '1' : '9';
    if (digits.length === 13 && digits[2] === extra) forms.push(digits.slice(0, 2) + digits.slice(3));
    if (digits.length === 12) forms.push(`${digits.slice(0, 2)}${extra}${digits.slice(2)}`);
  }
  return forms;
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
