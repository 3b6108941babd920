// Sends a lane's prepared webhook requests one after the other and stops where the lane must wait.
import { stopController } from '../../platform/util/stop-controller.js';
import type { Dispatcher } from 'undici';
import { postWebhook } from './http-attempt.js';
import { judge, type Verdict } from './outcome.js';

/** One delivery attempt, ready to go. */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** A failure of this attempt dead-letters the delivery instead of holding the lane for a retry. */
  lastAttempt: boolean;
}

export interface SendRules {
  timeoutMs: number;
  /** Statuses answered by a dead letter at once (never retried). */
  nonRetryable: readonly number[];
}

/**
 * Sends requests of one lane in order. Answers the verdicts of those attempted, in order: it stops after the first
 * that holds the lane (a failure to retry later, or an abort), so the rest are not attempted; nor is any request
 * once `startBefore` (epoch ms) has passed, so a batch ends while its claim in the store still holds.
 */
export interface OrderedSender {
  start(): void;
  send(requests: WebhookRequest[], startBefore: number): Promise<Verdict[]>;
  /** Abandons requests in flight (they answer `released`) and stops taking more. */
  stop(): Promise<void>;
}

/** A verdict after which the rest of the lane waits (per-instance order). */
function holdsLane(verdict: Verdict, lastAttempt: boolean): boolean {
  return verdict.kind === 'released' || (verdict.kind === 'failed' && !lastAttempt);
}

export async function sendInOrder(
  requests: WebhookRequest[],
  startBefore: number,
  rules: SendRules,
  dispatcher: Dispatcher,
  signal: AbortSignal,
): Promise<Verdict[]> {
  const verdicts: Verdict[] = [];
  for (const request of requests) {
    if (signal.aborted || Date.now() >= startBefore) break;
    const result = await postWebhook({ url: request.url, headers: request.headers, body: request.body, timeoutMs: rules.timeoutMs, dispatcher, signal });
    const verdict = judge(result, rules.nonRetryable, rules.timeoutMs);
    verdicts.push(verdict);
    if (holdsLane(verdict, request.lastAttempt)) break;
  }
  return verdicts;
}

/** Sends on this thread's event loop. */
export class InProcessSender implements OrderedSender {
  private stopping = stopController();

  constructor(
    private readonly rules: SendRules,
    private readonly dispatcher: Dispatcher,
  ) {}

  start(): void {
    if (this.stopping.signal.aborted) this.stopping = stopController();
  }

  send(requests: WebhookRequest[], startBefore: number): Promise<Verdict[]> {
    return sendInOrder(requests, startBefore, this.rules, this.dispatcher, this.stopping.signal);
  }

  async stop(): Promise<void> {
    this.stopping.abort();
  }
}
