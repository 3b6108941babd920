// One webhook HTTP attempt through the guarded undici dispatcher: POST, bounded by a timeout, body discarded.
import type { Dispatcher } from 'undici';
import { findForbiddenAddressError } from '../../platform/net/address-policy.js';

export type HttpResult =
  | { kind: 'response'; status: number }
  | { kind: 'timeout' }
  /** `forbidden`: the address policy refused the destination (retrying cannot help). */
  | { kind: 'error'; error: string; forbidden: boolean }
  /** The dispatcher is stopping; the attempt does not count. */
  | { kind: 'aborted' };

export interface HttpAttempt {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  dispatcher: Dispatcher;
  /** Aborted when the dispatcher stops. */
  signal: AbortSignal;
}

/** Response bodies are read only to free the connection; receivers' answers are never kept. */
const maxDrainBytes = 64 * 1024;

/**
 * One POST through `dispatcher.dispatch` with a small handler of our own: undici's `request()` (a body stream, a
 * signal per call) cost twice the CPU of the whole exchange, and a webhook sender makes thousands a second.
 */
export function postWebhook(attempt: HttpAttempt): Promise<HttpResult> {
  return new Promise<HttpResult>((resolve) => {
    let status: number | undefined;
    let timedOut = false;
    let controller: Dispatcher.DispatchController | undefined;
    let abortReason: Error | undefined;
    let drained = 0;
    let settled = false;
    const abort = (reason: Error) => {
      abortReason ??= reason;
      controller?.abort(reason);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      abort(new Error(`no answer within ${attempt.timeoutMs} ms`));
    }, attempt.timeoutMs);
    const stop = () => abort(new Error('the webhook sender is stopping'));
    const finish = (result: HttpResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      attempt.signal.removeEventListener('abort', stop);
      resolve(result);
    };
    const failed = (error: unknown) => {
      // The status decides the outcome: a receiver that stalls or breaks while sending its body changes nothing.
      if (status !== undefined) return finish({ kind: 'response', status });
      if (attempt.signal.aborted) return finish({ kind: 'aborted' });
      if (timedOut || codeOf(error) === 'UND_ERR_HEADERS_TIMEOUT') return finish({ kind: 'timeout' });
      const forbidden = findForbiddenAddressError(error);
      if (forbidden) return finish({ kind: 'error', error: forbidden.message, forbidden: true });
      finish({ kind: 'error', error: describe(error), forbidden: false });
    };
    if (attempt.signal.aborted) return finish({ kind: 'aborted' });
    attempt.signal.addEventListener('abort', stop, { once: true });
    let target: Target;
    try {
      target = targetOf(attempt.url);
    } catch (error) {
      return failed(error);
    }
    try {
      attempt.dispatcher.dispatch(
        {
          origin: target.origin,
          path: target.path,
          method: 'POST',
          headers: target.authorization ? withBasicAuth(attempt.headers, target.authorization) : attempt.headers,
          body: attempt.body,
          headersTimeout: attempt.timeoutMs,
          bodyTimeout: attempt.timeoutMs,
        },
        {
          onRequestStart(requestController) {
            controller = requestController;
            if (abortReason) requestController.abort(abortReason);
          },
          onResponseStart(_controller, statusCode) {
            // 1xx answers are interim; the final status comes after them.
            if (statusCode >= 200) status = statusCode;
          },
          onResponseData(responseController, chunk) {
            drained += chunk.length;
            // Enough read: the status is known and the rest is not worth the connection.
            if (drained > maxDrainBytes && status !== undefined) {
              finish({ kind: 'response', status });
              responseController.abort(new Error('response body too large to drain'));
            }
          },
          onResponseEnd() {
            if (status !== undefined) finish({ kind: 'response', status });
            else failed(new Error('the response ended without a status'));
          },
          onResponseError(_controller, error) {
            failed(error);
          },
        },
      );
    } catch (error) {
      failed(error);
    }
  });
}

interface Target {
  origin: string;
  path: string;
  /** `Basic …` from credentials in the URL (`https://user:pass@host/…`), sent as axios and browsers do. */
  authorization?: string;
}

/** Origin and path of a webhook URL, parsed once per URL (a lane posts to the same few URLs again and again). */
const targets = new Map<string, Target>();
const maxTargets = 1_000;

function targetOf(url: string): Target {
  let target = targets.get(url);
  if (!target) {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`unsupported protocol ${parsed.protocol}`);
    target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    if (parsed.username || parsed.password) {
      const credentials = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
      target.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
    }
    if (targets.size >= maxTargets) targets.clear();
    targets.set(url, target);
  }
  return target;
}

/** The headers with the URL's credentials, unless the webhook's own headers already say how to authenticate. */
function withBasicAuth(headers: Record<string, string>, authorization: string): Record<string, string> {
  for (const name in headers) if (name.toLowerCase() === 'authorization') return headers;
  return { ...headers, Authorization: authorization };
}

/** A short description of a network error: its code and message, cause included. */
function describe(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const code = codeOf(cause) ?? codeOf(error);
  const message = cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error);
  const text = code && !message.includes(code) ? `${code}: ${message}` : message;
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
