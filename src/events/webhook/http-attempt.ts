// One webhook HTTP attempt through the guarded undici dispatcher: POST, bounded by a timeout, body discarded.
import { request, type Dispatcher } from 'undici';
import { findForbiddenAddressError } from '../../net/address-policy.js';

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

export async function postWebhook(attempt: HttpAttempt): Promise<HttpResult> {
  // One controller with a plain timer: AbortSignal.timeout + AbortSignal.any cost more than the request itself here.
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, attempt.timeoutMs);
  const stop = () => controller.abort();
  if (attempt.signal.aborted) controller.abort();
  else attempt.signal.addEventListener('abort', stop, { once: true });
  const signal = controller.signal;
  try {
    const response = await request(attempt.url, {
      method: 'POST',
      headers: attempt.headers,
      body: attempt.body,
      dispatcher: attempt.dispatcher,
      signal,
      headersTimeout: attempt.timeoutMs,
      bodyTimeout: attempt.timeoutMs,
    });
    // The status decides the outcome; a receiver that stalls or breaks while sending its body changes nothing.
    await response.body.dump({ limit: maxDrainBytes, signal }).catch(() => undefined);
    return { kind: 'response', status: response.statusCode };
  } catch (error) {
    if (attempt.signal.aborted) return { kind: 'aborted' };
    if (timedOut || codeOf(error) === 'UND_ERR_HEADERS_TIMEOUT') return { kind: 'timeout' };
    const forbidden = findForbiddenAddressError(error);
    if (forbidden) return { kind: 'error', error: forbidden.message, forbidden: true };
    return { kind: 'error', error: describe(error), forbidden: false };
  } finally {
    clearTimeout(timer);
    attempt.signal.removeEventListener('abort', stop);
  }
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
