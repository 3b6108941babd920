// The header set of one webhook attempt: fixed headers, the instance's custom ones, `jwt_key` and signatures.
import { applyJwtKey } from './jwt-header.js';
import { signatureHeaders } from './signing.js';

const userAgent = 'Switchboard-Webhook';

/** Names a custom header may not set: framing is ours, and signatures must not be forged by configuration. */
const reserved = new Set([
  'content-type',
  'content-length',
  'transfer-encoding',
  'connection',
  'host',
  'keep-alive',
  'upgrade',
  'expect',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);
const tokenName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const safeValue = /^[^\r\n\0]*$/;
const jsonContentType = /^\s*application\/json\s*(;[^\r\n\0]*)?$/i;

/** Why a custom header cannot be sent as configured, or undefined when it can (the check `webhook/set` makes). */
export function customHeaderProblem(name: string, value: string): string | undefined {
  if (!tokenName.test(name)) return `"${name}" is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only, no spaces)`;
  // Evolution's documented webhook example carries `Content-Type: application/json`: the header every delivery has
  // anyway, so it is accepted (and sent once); another content type would misdescribe the JSON body.
  if (name.toLowerCase() === 'content-type') {
    return jsonContentType.test(value) ? undefined : `"${name}" is always application/json (the body is JSON); leave it out or set application/json`;
  }
  if (reserved.has(name.toLowerCase())) return `"${name}" is set by Switchboard itself and cannot be configured`;
  if (!safeValue.test(value)) return `"${name}" has a line break or NUL in its value`;
  return undefined;
}

export interface HeaderInput {
  /** The instance's configured headers (global deliveries: none). `jwt_key` among them becomes a bearer token. */
  custom: Record<string, unknown>;
  /** `whsec_…` secret; when present the signature headers are added. */
  secret: string | undefined;
  eventId: string;
  body: string;
  nowSec?: number;
}

export function deliveryHeaders(input: HeaderInput): Record<string, string> {
  const nowSec = input.nowSec ?? Math.floor(Date.now() / 1000);
  const custom: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.custom)) {
    // Stored options are JSON: keep only well-formed string headers, drop anything undici would refuse.
    if (typeof value !== 'string' || !tokenName.test(name) || !safeValue.test(value)) continue;
    if (reserved.has(name.toLowerCase())) continue;
    custom[name] = value;
  }
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': userAgent,
  };
  for (const [name, value] of Object.entries(applyJwtKey(custom, nowSec))) {
    if (name.toLowerCase() === 'user-agent') delete headers['User-Agent'];
    headers[name] = value;
  }
  if (input.secret) Object.assign(headers, signatureHeaders(input.secret, input.eventId, input.body, nowSec));
  return headers;
}
