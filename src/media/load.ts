// Turns a request's media field (http(s) URL, data URL or raw base64) into bytes; never reads local files.

import { invalidInput } from '../core/errors.js';
import { decodeBase64, decodeDataUrl, notMedia } from './base64.js';
import { fetchMedia } from './fetch-url.js';
import type { ProxySettings } from '../core/proxy.js';

export interface LoadMediaOptions {
  /** Largest accepted media, in bytes (413 beyond it). */
  maxBytes: number;
  /** Refuse URLs that reach loopback/private/link-local networks (metadata is always refused). */
  denyPrivate: boolean;
  /** Budget for downloading a URL, redirects included. */
  timeoutMs: number;
  /** Request field name used in error messages: media, sticker, content… */
  field: string;
  /** The instance's proxy, which a URL is downloaded through (null or absent: directly). */
  proxy?: ProxySettings | null;
}

export interface LoadedMedia {
  bytes: Buffer;
  fileNameHint?: string;
  declaredMimetype?: string;
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;

export async function loadMedia(input: string, opts: LoadMediaOptions): Promise<LoadedMedia> {
  const { field } = opts;
  if (typeof input !== 'string' || input.trim() === '') throw invalidInput(`${field} is empty`);
  const text = input.trim();
  const scheme = SCHEME.exec(text)?.[1]?.toLowerCase();

  if (scheme === undefined) return { bytes: decodeBase64(text, field, opts.maxBytes) };
  if (scheme === 'data') return decodeDataUrl(text, field, opts.maxBytes);
  if (scheme === 'http' || scheme === 'https') {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw notMedia(field, text);
    }
    return fetchMedia(url, opts);
  }
  if (/^[A-Za-z]$/.test(scheme)) throw notMedia(field, text); // a Windows path such as C:\…
  throw invalidInput(`${field} URL must use http or https (got ${scheme}); or send base64 or a data URL`);
}
