// Why a WhatsApp Web connection closed, and what the connector does about it (reconnect, stop, forget the session).
import { describeUnreachable } from './unreachable.js';

type CloseKind =
  /** The phone unlinked this device or the session was revoked (401): forget the session. */
  | 'logged-out'
  /** WhatsApp refuses this account or client (403, 402, 406, 411): stop until someone acts. */
  | 'permanent'
  /** Another client took over this session (440): stop, never fight it in a reconnect loop. */
  | 'replaced'
  /** WhatsApp asks for a fresh connection (515, after pairing): reconnect at once. */
  | 'restart'
  /** Network trouble, timeouts, server hiccups: reconnect with backoff. */
  | 'transient'
  /** WhatsApp Web could not be reached at all (DNS, refused, timeout, TLS, proxy): reconnect with backoff. */
  | 'unreachable';

export interface CloseDecision {
  kind: CloseKind;
  statusCode: number;
  reason: string;
}

const permanentCodes = new Map<number, string>([
  [403, 'WhatsApp refused this account (403 forbidden)'],
  [402, 'WhatsApp refused this account (402)'],
  [406, 'WhatsApp refused this client (406)'],
  [411, 'WhatsApp refused this client: multi-device mismatch (411)'],
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** The HTTP-like status code Baileys attaches to its errors (a Boom's `output.statusCode`), if any. */
export function statusCodeOf(error: unknown): number | undefined {
  if (!isRecord(error)) return undefined;
  const output = error.output;
  if (isRecord(output) && typeof output.statusCode === 'number') return output.statusCode;
  return undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error && error.message ? error.message : 'connection closed';
}

/** Where the connector tried to reach WhatsApp Web, to name it in reasons. */
export interface CloseContext {
  address: URL;
  /** How long one attempt may take (Baileys' connectTimeoutMs). */
  timeoutMs: number;
}

/** Classifies the `lastDisconnect.error` of a Baileys `connection.update {connection: 'close'}`. */
export function classifyClose(error: unknown, context?: CloseContext): CloseDecision {
  // Baileys reports a plain network close (no error object) as 428 connectionClosed.
  const statusCode = statusCodeOf(error) ?? 428;
  // A websocket that never opened (or a proxy answering the upgrade with an HTTP error) says nothing about the account.
  const unreachable = context ? describeUnreachable(error, context.address, context.timeoutMs) : null;
  if (unreachable) return { kind: 'unreachable', statusCode, reason: unreachable };
  const detail = messageOf(error);
  if (statusCode === 401) return { kind: 'logged-out', statusCode, reason: 'logged out from the phone (the linked device was removed)' };
  const permanent = permanentCodes.get(statusCode);
  if (permanent) return { kind: 'permanent', statusCode, reason: permanent };
  if (statusCode === 440) {
    return {
      kind: 'replaced',
      statusCode,
      reason: 'connection replaced: another client (or another node) is using this session; not reconnecting',
    };
  }
  if (statusCode === 515) return { kind: 'restart', statusCode, reason: 'restart required' };
  return { kind: 'transient', statusCode, reason: `${detail} (${statusCode})` };
}

/** Codes that mean the connection itself failed (a send may work after a reconnect). */
const connectionCodes = new Set([408, 428, 440, 500, 503, 515]);

/** True when a failed operation should be retried later rather than given up. */
export function isConnectionFailure(error: unknown): boolean {
  const code = statusCodeOf(error);
  if (code !== undefined) return connectionCodes.has(code);
  return error instanceof Error && /connection (closed|lost|terminated)|timed? ?out|socket/i.test(error.message);
}
