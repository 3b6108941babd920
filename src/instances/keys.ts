// API keys: generation, hashing for lookup, and constant-time comparison.
import * as crypto from 'node:crypto';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// One-shot hashing (Node >= 20.12) costs half of a Hash object per call: it runs on every authenticated request.
const oneShotHash = (crypto as { hash?: typeof crypto.hash }).hash;

/** The SHA-256 of a key's UTF-8 bytes. */
export function keyDigest(key: string): Buffer {
  return oneShotHash ? oneShotHash('sha256', key, 'buffer') : createHash('sha256').update(key, 'utf8').digest();
}

export function generateApiKey(): string {
  return randomBytes(24).toString('base64url');
}

export function hashApiKey(key: string): string {
  return keyDigest(key).toString('hex');
}

/** Compares two secrets without leaking where they differ (hashes first so lengths always match). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(keyDigest(a), keyDigest(b));
}
