// Turns the result of a webhook attempt into the delivery's next state: delivered, retry later, or dead.
import type { Updateable } from 'kysely';
import type { DeliveriesTable } from '../../platform/store/schema.js';
import { delayFor, type BackoffPolicy } from '../../platform/util/backoff.js';
import type { HttpResult } from './http-attempt.js';
import type { DeliveryRow, DeliveryState } from './queries.js';

export type Verdict =
  | { kind: 'delivered'; status: number }
  /** Retrying cannot help: dead-lettered at once. */
  | { kind: 'rejected'; status: number | null; error: string }
  /** Counts as a failed attempt; retried after a backoff until attempts run out. */
  | { kind: 'failed'; status: number | null; error: string }
  /** Not attempted after all (stopping): the delivery goes back to the lane untouched. */
  | { kind: 'released' };

export function judge(result: HttpResult, nonRetryable: readonly number[], timeoutMs: number): Verdict {
  switch (result.kind) {
    case 'aborted':
      return { kind: 'released' };
    case 'timeout':
      return { kind: 'failed', status: null, error: `no answer within ${timeoutMs} ms` };
    case 'error':
      return result.forbidden
        ? { kind: 'rejected', status: null, error: `destination refused: ${result.error}` }
        : { kind: 'failed', status: null, error: result.error };
    case 'response': {
      const { status } = result;
      if (status >= 200 && status < 300) return { kind: 'delivered', status };
      if (nonRetryable.includes(status)) return { kind: 'rejected', status, error: `HTTP ${status} (not retried)` };
      const note = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
      return { kind: 'failed', status, error: `HTTP ${status}${note}` };
    }
  }
}

export interface Settlement {
  state: DeliveryState;
  patch: Updateable<DeliveriesTable>;
  /** Set when another attempt is scheduled. */
  retryAt?: number;
}

export interface RetryRules {
  maxAttempts: number;
  backoff: BackoffPolicy;
  random?: () => number;
}

export function settlement(verdict: Verdict, row: DeliveryRow, now: number, rules: RetryRules): Settlement {
  if (verdict.kind === 'released') return { state: 'pending', patch: { next_attempt_at: now } };
  const attempts = row.attempts + 1;
  switch (verdict.kind) {
    case 'delivered':
      return {
        state: 'delivered',
        patch: { state: 'delivered', attempts, last_status: verdict.status, last_error: null, delivered_at: now },
      };
    case 'rejected':
      return { state: 'dead', patch: { state: 'dead', attempts, last_status: verdict.status, last_error: shorten(verdict.error) } };
    case 'failed': {
      if (attempts >= rules.maxAttempts) {
        const error = `${verdict.error}; gave up after ${attempts} attempt${attempts === 1 ? '' : 's'}`;
        return { state: 'dead', patch: { state: 'dead', attempts, last_status: verdict.status, last_error: shorten(error) } };
      }
      const retryAt = now + delayFor(rules.backoff, attempts, rules.random);
      return {
        state: 'pending',
        retryAt,
        patch: { attempts, next_attempt_at: retryAt, last_status: verdict.status, last_error: shorten(verdict.error) },
      };
    }
  }
}

/** Errors kept in the log stay short (and never carry bodies). */
export function shorten(text: string): string {
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}
