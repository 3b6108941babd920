// Meta's webhook signature: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body under the app secret>`.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type SignatureVerdict = 'valid' | 'missing' | 'malformed' | 'mismatch';

/** Checks the header against every configured app secret (several during a rotation), in constant time per secret. */
export function checkSignature(rawBody: Buffer, header: string | undefined, appSecrets: string[]): SignatureVerdict {
  if (!header) return 'missing';
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!match) return 'malformed';
  const given = Buffer.from(match[1], 'hex');
  const valid = appSecrets.some((secret) => timingSafeEqual(createHmac('sha256', secret).update(rawBody).digest(), given));
  return valid ? 'valid' : 'mismatch';
}

/** The header value Meta would send for this body (used by tests and tools that replay payloads). */
export function signBody(rawBody: Buffer | string, appSecret: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
}
