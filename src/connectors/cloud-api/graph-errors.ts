// Turns Graph API refusals and network failures into the connector errors the core understands.
import { ProviderError, TransientConnectorError } from '../../core/connector.js';

/** The error object Graph answers with: `{error: {message, type, code, error_subcode, error_data, fbtrace_id}}`. */
export interface GraphErrorBody {
  message?: string;
  type?: string;
  code?: number;
  error_subcode?: number;
  error_data?: { details?: string };
  /** What Meta tells a person (template review refusals carry these). */
  error_user_title?: string;
  error_user_msg?: string;
  fbtrace_id?: string;
}

/** What is known of one failed Graph call, for logs (never a token or a message body). */
export interface GraphFailureInfo {
  httpStatus: number;
  code: number | null;
  subcode: number | null;
  fbtraceId: string | null;
}

/** Throughput and availability codes Meta documents as "try again later". */
const retryableCodes = new Set([
  1, // API unknown (temporary)
  2, // API service temporarily unavailable
  4, // application request limit
  80007, // WhatsApp Business Account rate limit
  130429, // Cloud API throughput reached
  131016, // service unavailable
  131056, // (business, consumer) pair rate limit
]);

export function graphErrorOf(body: unknown): GraphErrorBody | null {
  if (typeof body !== 'object' || body === null) return null;
  const error = (body as { error?: unknown }).error;
  return typeof error === 'object' && error !== null ? (error as GraphErrorBody) : null;
}

/** The person-readable lines of a Graph error: `Meta error 131030: Recipient phone number not in allowed list`, then details. */
function graphErrorMessages(httpStatus: number, error: GraphErrorBody | null): string[] {
  if (!error) return [`Meta Graph API answered HTTP ${httpStatus} without an error description`];
  // Graph prefixes the text with the code, "(#131030) …"; the code is already in our line.
  const text = (error.message ?? '').replace(/^\(#\d+\)\s*/, '').trim() || `HTTP ${httpStatus}`;
  const code = typeof error.code === 'number' ? error.code : 'unknown';
  const subcode = typeof error.error_subcode === 'number' ? ` (subcode ${error.error_subcode})` : '';
  const lines = [`Meta error ${code}${subcode}: ${text}`];
  const details = error.error_data?.details?.trim();
  if (details && details !== text) lines.push(details);
  const title = error.error_user_title?.trim();
  const userMessage = error.error_user_msg?.trim();
  if (title || userMessage) lines.push([title, userMessage].filter(Boolean).join(': '));
  return lines;
}

export function failureInfo(httpStatus: number, error: GraphErrorBody | null): GraphFailureInfo {
  return {
    httpStatus,
    code: typeof error?.code === 'number' ? error.code : null,
    subcode: typeof error?.error_subcode === 'number' ? error.error_subcode : null,
    fbtraceId: typeof error?.fbtrace_id === 'string' ? error.fbtrace_id : null,
  };
}

/**
 * The error to throw for a Graph answer that is not a success: throughput limits and server trouble may pass if the send
 * is tried again (TransientConnectorError); anything else is Meta refusing the request (ProviderError, 400 — a Graph 401
 * is a bad Meta token, not a bad Switchboard key, so it must not reach the caller as 401).
 */
export function graphFailure(httpStatus: number, body: unknown): ProviderError | TransientConnectorError {
  const error = graphErrorOf(body);
  const messages = graphErrorMessages(httpStatus, error);
  const code = typeof error?.code === 'number' ? error.code : null;
  if (httpStatus >= 500 || httpStatus === 429 || (code !== null && retryableCodes.has(code))) {
    return new TransientConnectorError(messages.join('; '));
  }
  return new ProviderError(httpStatus >= 400 && httpStatus < 500 ? 'refused' : 'failed', messages);
}

/** A request that got no answer (refused, reset, timed out): worth another attempt later. */
export function networkFailure(error: unknown, timeoutMs: number): TransientConnectorError {
  // Already said in words (the instance's proxy cannot be reached).
  if (error instanceof TransientConnectorError) return error;
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return new TransientConnectorError(`Meta Graph API did not answer within ${timeoutMs} ms`);
  }
  const reason = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(error);
  return new TransientConnectorError(`Meta Graph API unreachable: ${reason}`);
}
