// The phone number WhatsApp Web takes for a pairing code (instead of scanning the QR code), as create and connect take it.
import { invalidInput } from '../../core/errors.js';

const pairingNumberRule = 'number must be a phone number with country code, 5 to 15 digits';

/**
 * The digits of a number for a pairing code (spaces, `+`, dashes and parentheses dropped); an empty one means none
 * (clients send `""` for fields they leave out).
 */
export function pairingDigits(number: string): string | undefined {
  const digits = number.replace(/[\s+()-]/g, '');
  if (digits === '') return undefined;
  if (!/^\d{5,15}$/.test(digits)) throw invalidInput(pairingNumberRule);
  return digits;
}

/** The digits of a number connect was given; one that is empty once cleaned is refused. */
export function requiredPairingDigits(number: string): string {
  const digits = pairingDigits(number);
  if (!digits) throw invalidInput(pairingNumberRule);
  return digits;
}
