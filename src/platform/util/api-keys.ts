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

/** A key's SHA-256, as bytes and as the hex the registry indexes instance keys by. */
export interface KeyDigest {
  bytes: Buffer;
  hex: string;
}

/**
 * Digests of keys that authenticated, so a client's every request does not hash its key again (a hash per request
 * showed in profiles). It memoises a pure function: a key's digest never changes, and whether the key is still
 * valid is decided by comparing the digest each time, as before. Wrong keys are not kept, so guessing gains nothing
 * and cannot fill it; it starts over when full.
 */
export class KnownKeyDigests {
  private readonly digests = new Map<string, KeyDigest>();

  constructor(private readonly capacity = 10_000) {}

  /** The key's digest, computed unless the key authenticated before. */
  of(key: string): KeyDigest {
    const known = this.digests.get(key);
    if (known) return known;
    const bytes = keyDigest(key);
    return { bytes, hex: bytes.toString('hex') };
  }

  /** The key authenticated: keep its digest. */
  remember(key: string, digest: KeyDigest): void {
    if (this.digests.has(key)) return;
    if (this.digests.size >= this.capacity) this.digests.clear();
    this.digests.set(key, digest);
  }
}
