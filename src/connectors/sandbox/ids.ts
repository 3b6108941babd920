// Random identifiers of the sandbox network: link codes, message key ids and generated phone numbers.
import { randomBytes, randomInt } from 'node:crypto';

/** A link token shown in the QR code; 192 random bits, URL-safe. */
export function newLinkCode(): string {
  return `sbx_${randomBytes(24).toString('base64url')}`;
}

/** A WhatsApp-Web-style message key id: `3EB0` followed by 18 uppercase hex digits. */
export function newKeyId(): string {
  return `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
}

/** A phone number for auto-linked instances: `99` and 10 random digits (no real country code starts 99). */
export function newSandboxNumber(): string {
  let digits = '99';
  for (let i = 0; i < 10; i++) digits += String(randomInt(10));
  return digits;
}
