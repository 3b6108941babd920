// Downloads media from a caller-supplied http(s) URL safely: guarded addresses, manual redirects, size cap.

import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { request, type Dispatcher } from 'undici';
import { CodedError, invalidInput, tooLarge } from '../core/errors.js';
import type { ProxySettings } from '../core/proxy.js';
import { checkLiteralHost, findForbiddenAddressError, isForbiddenAddress, urlHost } from '../platform/net/address-policy.js';
import { sharedGuardedDispatcher } from '../platform/net/guarded-dispatcher.js';
import { sharedProxyDispatcher } from '../platform/net/proxy-dispatcher.js';
import { proxyFailureOf } from '../platform/net/proxy-failure.js';
import { formatBytes } from './size.js';

export interface FetchMediaOptions {
  maxBytes: number;
  denyPrivate: boolean;
  /** Budget for the whole download, redirects included. */
  timeoutMs: number;
  /** Request field name used in error messages. */
  field: string;
  /** Overrides the shared guarded dispatcher (tests). */
  dispatcher?: Dispatcher;
  /** The instance's proxy: the download goes through it (null or absent: directly). */
  proxy?: ProxySettings | null;
}

export interface FetchedMedia {
  bytes: Buffer;
  fileNameHint?: string;
  declaredMimetype?: string;
}

const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

type Headers = Dispatcher.ResponseData['headers'];

const header = (headers: Headers, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * Abandons a response body. undici's body stream turns a plain destroy() into an
 * 'error' event (RequestAbortedError); without a listener that would crash the process.
 */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

function assertFetchable(url: URL, opts: FetchMediaOptions): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalidInput(`${opts.field} URL must use http or https (got ${url.protocol.slice(0, -1)})`);
  }
  const forbidden = checkLiteralHost(url, { denyPrivate: opts.denyPrivate });
  if (forbidden) throw forbiddenError(forbidden, opts.field);
}

/**
 * Through a proxy the destination's name is resolved by the proxy, so the guard cannot pin the address connected to.
 * A name that resolves here to a refused address is refused all the same (any of its addresses); a name that does not
 * resolve here is left to the proxy (a proxy is often how a closed network reaches the outside at all).
 */
async function assertNameAllowed(url: URL, opts: FetchMediaOptions): Promise<void> {
  const host = urlHost(url);
  if (isIP(host)) return;
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    return;
  }
  for (const { address } of addresses) {
    const reason = isForbiddenAddress(address, { denyPrivate: opts.denyPrivate });
    if (reason) throw forbiddenError({ host, address, reason }, opts.field);
  }
}

function forbiddenError(err: { host: string; address: string; reason: string }, field: string): CodedError {
  const where = err.host === err.address ? '' : ` (${err.host} resolves to ${err.address})`;
  return invalidInput(`${field} URL points to a forbidden address (${err.address})${where}: ${err.reason}`);
}

/** Picks a file name from Content-Disposition, else from the last path segment of the URL. */
function fileNameHint(headers: Headers, url: URL): string | undefined {
  const disposition = header(headers, 'content-disposition') ?? '';
  const extended = /filename\*\s*=\s*[\w-]+'[^']*'([^;]+)/i.exec(disposition);
  const plain = /filename\s*=\s*(?:"([^"]*)"|([^;]+))/i.exec(disposition);
  const candidates = [extended?.[1], plain?.[1] ?? plain?.[2]?.trim(), url.pathname.split('/').pop()];
  for (const candidate of candidates) {
    if (!candidate) continue;
    let name = candidate;
    try {
      name = decodeURIComponent(candidate);
    } catch {
      // keep the raw text if it is not valid percent-encoding
    }
    name = name.replace(/^.*[\\/]/, '').trim();
    if (name) return name;
  }
  return undefined;
}

function declaredMimetype(headers: Headers): string | undefined {
  const type = header(headers, 'content-type')?.split(';')[0]?.trim().toLowerCase();
  return type && /^[\w.+-]+\/[\w.+-]+$/.test(type) ? type : undefined;
}

function errorCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 8; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Turns whatever the download threw into a coded error a caller can act on. */
function toCodedError(err: unknown, url: URL, opts: FetchMediaOptions, signal: AbortSignal): CodedError {
  if (err instanceof CodedError) return err;
  const field = opts.field;
  const throughProxy = opts.proxy ? proxyFailureOf(err, opts.proxy) : null;
  if (throughProxy) return invalidInput(`${field} URL could not be fetched through the instance's proxy: ${throughProxy}`);
  const forbidden = findForbiddenAddressError(err);
  if (forbidden) return forbiddenError(forbidden, opts.field);
  if (signal.aborted) return invalidInput(`${field} URL did not finish downloading within ${opts.timeoutMs / 1000} seconds`);
  const code = errorCode(err);
  const host = urlHost(url);
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NODATA':
      return invalidInput(`${field} URL host ${host} could not be resolved`);
    case 'ECONNREFUSED':
      return invalidInput(`${field} URL host ${host} refused the connection`);
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return invalidInput(`${field} URL host ${host} could not be reached (connection timed out)`);
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return invalidInput(`${field} URL host ${host} closed the connection before the download finished`);
  }
  if (code && /CERT|SELF_SIGNED|TLS|SSL|UNABLE_TO_VERIFY/.test(code)) {
    return invalidInput(`${field} URL has a TLS certificate problem (${code})`);
  }
  const detail = code ?? (err instanceof Error ? err.message : String(err));
  return invalidInput(`${field} URL could not be fetched (${detail})`);
}

export async function fetchMedia(url: URL, opts: FetchMediaOptions): Promise<FetchedMedia> {
  const signal = AbortSignal.timeout(opts.timeoutMs);
  // Built after the destination's checks (a proxy at a refused address is refused when built): inside the try.
  const dispatcher = () => opts.dispatcher ?? (opts.proxy ? sharedProxyDispatcher(opts.proxy, opts.denyPrivate) : sharedGuardedDispatcher(opts.denyPrivate));
  const sizeExceeded = () => tooLarge(`${opts.field} is larger than the ${formatBytes(opts.maxBytes)} limit`);
  let current = url;
  try {
    for (let redirects = 0; ; redirects++) {
      assertFetchable(current, opts);
      if (opts.proxy) await assertNameAllowed(current, opts);
      const res = await request(current, {
        method: 'GET',
        dispatcher: dispatcher(),
        signal,
        headers: { 'user-agent': 'Switchboard media fetcher', accept: '*/*', 'accept-encoding': 'identity' },
      });

      if (REDIRECT_STATUSES.has(res.statusCode)) {
        discard(res.body);
        const location = header(res.headers, 'location');
        if (!location) throw invalidInput(`${opts.field} URL answered HTTP ${res.statusCode} without a Location header`);
        if (redirects >= MAX_REDIRECTS) throw invalidInput(`${opts.field} URL redirected more than ${MAX_REDIRECTS} times`);
        try {
          current = new URL(location, current);
        } catch {
          throw invalidInput(`${opts.field} URL redirected to an invalid URL`);
        }
        continue;
      }
      if (res.statusCode < 200 || res.statusCode > 299) {
        discard(res.body);
        throw invalidInput(`${opts.field} URL answered HTTP ${res.statusCode}`);
      }

      const length = Number(header(res.headers, 'content-length'));
      if (Number.isFinite(length) && length > opts.maxBytes) {
        discard(res.body);
        throw sizeExceeded();
      }
      const chunks: Buffer[] = [];
      let total = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        total += chunk.length;
        if (total > opts.maxBytes) {
          discard(res.body);
          throw sizeExceeded();
        }
        chunks.push(chunk);
      }
      if (total === 0) throw invalidInput(`${opts.field} URL returned an empty body`);
      return {
        bytes: Buffer.concat(chunks, total),
        fileNameHint: fileNameHint(res.headers, current),
        declaredMimetype: declaredMimetype(res.headers),
      };
    }
  } catch (err) {
    throw toCodedError(err, current, opts, signal);
  }
}
