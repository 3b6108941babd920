// Standard Webhooks signatures: `whsec_` secrets, the webhook-id/-timestamp/-signature headers, and their verification.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { decodeSecret } from '../../platform/util/webhook-secret.js';

// A type alias (not an interface) so it can be passed wherever a plain header record is expected.
export type SignatureHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/** `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`. */
function signPayload(key: Buffer, id: string, timestampSec: number, body: string): string {
  const mac = createHmac('sha256', key).update(`${id}.${timestampSec}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

/** The three headers to send with a delivery of `body` for event `id`. */
export function signatureHeaders(secret: string, id: string, body: string, nowSec = unixNow()): SignatureHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(nowSec),
    'webhook-signature': signPayload(decodeSecret(secret), id, nowSec, body),
  };
}

export type VerifyResult = { valid: true; id: string; timestamp: number } | { valid: false; reason: string };

type HeaderBag = Record<string, string | string[] | undefined> | Headers;

/**
 * Receiver recipe: checks a delivery's signature against the raw request body (the exact bytes received,
 * before any JSON parsing). Rejects timestamps further than `toleranceSec` from now (replays) and accepts
 * any of several space-separated `v1,` signatures (secret rotation).
 */
export function verifyWebhook(secret: string, headers: HeaderBag, body: string, toleranceSec = 300, nowSec = unixNow()): VerifyResult {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) return { valid: false, reason: 'missing webhook-id, webhook-timestamp or webhook-signature' };
  if (!/^\d+$/.test(timestamp)) return { valid: false, reason: 'webhook-timestamp is not a unix time' };
  const ts = Number(timestamp);
  if (Math.abs(nowSec - ts) > toleranceSec) return { valid: false, reason: 'webhook-timestamp outside the tolerance' };
  let key: Buffer;
  try {
    key = decodeSecret(secret);
  } catch (error) {
    return { valid: false, reason: (error as Error).message };
  }
  const expected = Buffer.from(signPayload(key, id, ts, body).slice(3), 'base64');
  for (const candidate of signatures.split(' ')) {
    const [version, mac] = candidate.split(',', 2);
    if (version !== 'v1' || !mac) continue;
    const given = Buffer.from(mac, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { valid: true, id, timestamp: ts };
  }
  return { valid: false, reason: 'no matching signature' };
}

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : bag[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}
