// Known API key digests: the SHA-256 of a key, remembered only for keys that authenticated, within a bound.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyDigest, KnownKeyDigests } from '../../../src/platform/util/api-keys.js';

describe('known API key digests', () => {
  it('give the SHA-256 of the key, and keep only keys said to have authenticated', () => {
    const digests = new KnownKeyDigests(2);
    const first = digests.of('key-one');
    expect(first.bytes.equals(keyDigest('key-one'))).toBe(true);
    expect(first.hex).toBe(createHash('sha256').update('key-one').digest('hex'));
    // Not remembered: each look computes it again (a new object).
    expect(digests.of('key-one')).not.toBe(first);
    digests.remember('key-one', first);
    expect(digests.of('key-one')).toBe(first);
    // Full: it starts over rather than growing.
    digests.remember('key-two', digests.of('key-two'));
    digests.remember('key-three', digests.of('key-three'));
    expect(digests.of('key-one')).not.toBe(first);
    expect(digests.of('key-one').hex).toBe(first.hex);
  });
});
