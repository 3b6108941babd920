// Strict decoding of inline media: raw base64 strings and base64 data URLs.

import { CodedError, invalidInput, tooLarge } from '../core/errors.js';
import { formatBytes } from './size.js';

export interface InlineMedia {
  bytes: Buffer;
  declaredMimetype?: string;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const WHITESPACE = /[\s]+/g;
const MIMETYPE = /^[\w.+-]+\/[\w.+-]+$/;

/** The input is not anything we accept as media; says so in terms a caller can act on. */
export function notMedia(field: string, input: string) {
  const hint = /^(\/|\.{1,2}[\\/]|~|[A-Za-z]:\\)/.test(input) ? ' (local file paths are never read)' : '';
  return invalidInput(`${field} is not a valid URL, base64 string or data URL${hint}`);
}

/** Decodes standard, padded base64 (whitespace and newlines allowed), enforcing the size cap. */
export function decodeBase64(input: string, field: string, maxBytes: number): Buffer {
  const text = input.replace(WHITESPACE, '');
  if (text === '') throw invalidInput(`${field} is empty`);
  if (!BASE64.test(text) || text.length % 4 !== 0) throw notMedia(field, input.trim());
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const size = (text.length / 4) * 3 - padding;
  if (size > maxBytes) throw tooLarge(`${field} is larger than the ${formatBytes(maxBytes)} limit`);
  if (size === 0) throw invalidInput(`${field} is empty`);
  return Buffer.from(text, 'base64');
}

/** Decodes `data:<mimetype>[;param];base64,<data>`. */
export function decodeDataUrl(input: string, field: string, maxBytes: number): InlineMedia {
  const comma = input.indexOf(',');
  if (comma === -1) throw invalidInput(`${field} data URL has no comma before its data (expected data:<mimetype>;base64,<data>)`);
  const meta = input
    .slice('data:'.length, comma)
    .split(';')
    .map((p) => p.trim());
  if (meta[meta.length - 1]?.toLowerCase() !== 'base64') {
    throw invalidInput(`${field} data URL must be base64-encoded (expected data:<mimetype>;base64,<data>)`);
  }
  let payload = input.slice(comma + 1);
  if (payload.includes('%')) {
    try {
      payload = decodeURIComponent(payload);
    } catch {
      throw invalidInput(`${field} data URL contains invalid percent-encoding`);
    }
  }
  const mimetype = meta[0]?.toLowerCase();
  let bytes: Buffer;
  try {
    bytes = decodeBase64(payload, field, maxBytes);
  } catch (err) {
    if (err instanceof CodedError && err.code === 'invalid_input' && payload.replace(WHITESPACE, '') !== '') {
      throw invalidInput(`${field} data URL does not contain valid base64 data`);
    }
    throw err;
  }
  return { bytes, declaredMimetype: mimetype && MIMETYPE.test(mimetype) ? mimetype : undefined };
}
