// The secrets box: secrets sealed at rest and opened again, tampered ones refused.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretsBox } from '../../../src/platform/util/secrets-box.js';

describe('secrets box', () => {
  it('seals and opens secrets, refusing tampered ones', () => {
    const box = new SecretsBox(randomBytes(32));
    const sealed = box.seal('top-secret');
    expect(sealed).not.toContain('top-secret');
    expect(box.open(sealed)).toBe('top-secret');
    // Flip one bit of the ciphertext (replacing base64 characters could leave the decoded bytes unchanged).
    const [version, iv, tag, body] = sealed.split('.');
    const tampered = Buffer.from(body, 'base64url');
    tampered[0] ^= 1;
    expect(() => box.open(`${version}.${iv}.${tag}.${tampered.toString('base64url')}`)).toThrow();
  });
});
