// A binary field of message content in any JSON spelling clients send: base64 text, or an object indexed "0", "1", ….
import { invalidInput } from '../core/errors.js';
import { formatBytes } from './size.js';

/** The bytes of `value` (base64 text, or an indexed object as Evolution serialises bytes), or undefined. */
export function bytesOf(value: unknown): Buffer | undefined {
  if (typeof value === 'string') return value === '' ? undefined : Buffer.from(value, 'base64');
  if (typeof value !== 'object' || value === null) return undefined;
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0 || !entries.every(([index, byte]) => /^\d+$/.test(index) && typeof byte === 'number')) return undefined;
  const bytes = Buffer.alloc(entries.length);
  for (const [index, byte] of entries) bytes[Number(index)] = byte as number;
  return bytes;
}

/** The 400 for media larger than MEDIA_MAX_BYTES allows to download. */
export function mediaTooLarge(maxBytes: number) {
  return invalidInput(`the media is larger than the ${formatBytes(maxBytes)} limit (MEDIA_MAX_BYTES)`);
}

/** Encryption adds at most one block of padding and the 10-byte MAC to the plain bytes. */
export const encryptionOverhead = 16 + 10;
