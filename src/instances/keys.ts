// API keys: generation, hashing for lookup, and constant-time comparison.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export function generateApiKey(): string {
  return randomBytes(24).toString('base64url');
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Compares two secrets without leaking where they differ (hashes first so lengths always match). */
export function secretsEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}
