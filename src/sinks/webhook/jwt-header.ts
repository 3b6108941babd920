// Evolution's `jwt_key` custom header: replaced by `Authorization: Bearer <HS256 JWT>` signed with its value.
import { createHmac } from 'node:crypto';

const jwtKeyHeader = 'jwt_key';
/** Lifetime of the token, as upstream: ten minutes. */
const lifetimeSec = 600;

/** A compact HS256 JWS of `claims` keyed with the UTF-8 bytes of `key`. */
function signJwtHs256(key: string, claims: Record<string, unknown>): string {
  const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const payload = base64url(JSON.stringify(claims));
  const signature = createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

/**
 * When `headers` hold `jwt_key`, returns them without it and with `Authorization: Bearer <JWT>`
 * (claims `{iat, exp: iat+600, app: "evolution", action: "webhook"}`); otherwise returns them unchanged.
 * An `Authorization` header given alongside is replaced, as upstream does.
 */
export function applyJwtKey(headers: Record<string, string>, nowSec = Math.floor(Date.now() / 1000)): Record<string, string> {
  const keyName = Object.keys(headers).find((name) => name.toLowerCase() === jwtKeyHeader);
  if (keyName === undefined) return headers;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name === keyName || name.toLowerCase() === 'authorization') continue;
    out[name] = value;
  }
  const token = signJwtHs256(headers[keyName], { iat: nowSec, exp: nowSec + lifetimeSec, app: 'evolution', action: 'webhook' });
  out.Authorization = `Bearer ${token}`;
  return out;
}

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}
