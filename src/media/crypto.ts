// WhatsApp media encryption and decryption: keys from baileys' getMediaKeys, AES-256-CBC + truncated HMAC.

import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { loadBaileys } from './baileys.js';
import type { MediaKind } from './types.js';

export interface EncryptedMedia {
  mediaKey: Buffer;
  /** Ciphertext followed by the 10-byte MAC, exactly what gets uploaded. */
  encrypted: Buffer;
  fileSha256: Buffer;
  fileEncSha256: Buffer;
  mediaKeyTimestamp: number;
}

/** Length of the MAC WhatsApp appends to the ciphertext. */
export const MEDIA_MAC_LENGTH = 10;
const AES_BLOCK = 16;

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest();

/** Baileys' media types (which key derivation and upload path apply); ours are among them. */
export type MediaKeyKind = Parameters<Awaited<ReturnType<typeof loadBaileys>>['getMediaKeys']>[1];

/**
 * Encrypts media the way baileys' `encryptedStream` does, but in memory (that function
 * always writes temp files), with a new media key.
 */
export async function encryptMedia(bytes: Buffer, kind: MediaKind): Promise<EncryptedMedia> {
  const mediaKey = randomBytes(32);
  return { mediaKey, ...(await encryptWithKey(bytes, mediaKey, kind)), mediaKeyTimestamp: Math.floor(Date.now() / 1000) };
}

/**
 * Encrypts media with a given media key: AES-256-CBC with keys from baileys' own `getMediaKeys` (HKDF whose info
 * string depends on the kind; sticker shares image keys), then HMAC-SHA256 over iv + ciphertext cut to 10 bytes.
 * The same key and bytes always give the same ciphertext, so a message's fileEncSha256 stays valid.
 */
export async function encryptWithKey(
  bytes: Buffer,
  mediaKey: Buffer,
  kind: MediaKeyKind,
): Promise<{ encrypted: Buffer; fileSha256: Buffer; fileEncSha256: Buffer }> {
  const { getMediaKeys } = await loadBaileys();
  const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, kind);
  if (!macKey) throw new Error('baileys getMediaKeys returned no macKey'); // typed optional, always set
  const cipher = createCipheriv('aes-256-cbc', cipherKey, iv);
  const ciphertext = Buffer.concat([cipher.update(bytes), cipher.final()]);
  const mac = createHmac('sha256', macKey).update(iv).update(ciphertext).digest().subarray(0, MEDIA_MAC_LENGTH);
  const encrypted = Buffer.concat([ciphertext, mac]);
  return { encrypted, fileSha256: sha256(bytes), fileEncSha256: sha256(encrypted) };
}

/**
 * Opens media encrypted by `encryptMedia` (or by any WhatsApp client): checks the trailing 10-byte MAC
 * (HMAC-SHA256 over iv + ciphertext, compared in constant time) before decrypting with AES-256-CBC.
 * A wrong MAC (wrong key, wrong kind or damaged bytes) throws.
 */
export async function decryptMedia(encrypted: Buffer, mediaKey: Buffer, kind: MediaKind): Promise<Buffer> {
  if (mediaKey.length !== 32) throw new Error(`media key must be 32 bytes (got ${mediaKey.length})`);
  const cipherLength = encrypted.length - MEDIA_MAC_LENGTH;
  if (cipherLength < AES_BLOCK || cipherLength % AES_BLOCK !== 0) {
    throw new Error(`encrypted media has an impossible length (${encrypted.length} bytes)`);
  }
  const { getMediaKeys } = await loadBaileys();
  const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, kind);
  if (!macKey) throw new Error('baileys getMediaKeys returned no macKey'); // typed optional, always set
  const ciphertext = encrypted.subarray(0, cipherLength);
  const mac = encrypted.subarray(cipherLength);
  const expected = createHmac('sha256', macKey).update(iv).update(ciphertext).digest().subarray(0, MEDIA_MAC_LENGTH);
  if (!timingSafeEqual(mac, expected)) throw new Error('encrypted media MAC does not match (wrong media key or kind, or damaged media)');
  const decipher = createDecipheriv('aes-256-cbc', cipherKey, iv);
  try {
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch {
    throw new Error('encrypted media could not be decrypted (bad padding)');
  }
}
