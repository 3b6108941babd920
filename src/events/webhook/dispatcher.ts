// Delivers queued webhook deliveries: one ordered lane per (target, instance), lanes run concurrently, state kept in the store.
import type { Dispatcher } from 'undici';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { sharedGuardedDispatcher } from '../../net/guarded-dispatcher.js';
import type { Store } from '../../store/db.js';
import { LaneScheduler } from '../../util/lanes.js';
import type { SecretsBox } from '../../util/secrets-box.js';
import type { SinkConfigs } from '../sink-configs.js';
import { backoffPolicy } from './backoff.js';
import { resolveDestination } from './destination.js';
import { deliveryHeaders } from './headers.js';
import { postWebhook } from './http-attempt.js';
import type { MediaResolver } from './media-base64.js';
import { judge, settlement, shorten, type RetryRules, type Verdict } from './outcome.js';
import { deliveryBody, inlineMedia } from './payload.js';
import { claim, laneHead, laneHeads, laneKey, loadEnvelope, parseLaneKey, settle, type DeliveryRow } from './queries.js';

export interface WebhookDispatcherDeps {
  store: Pick<Store, 'db'>;
  config: Config;
  sinks: SinkConfigs;
  box: SecretsBox;
  logger: Logger;
  /** Supplies media as base64 for webhooks with the `base64` option; without it payloads go unchanged. */
  mediaResolver?: MediaResolver;
  /** Safety poll for missed wake-ups and other nodes' work (default 1000 ms). */
  pollMs?: number;
  /** Lanes (receivers) served at once (default 64). */
  maxConcurrentLanes?: number;
  /** Told every recorded outcome (metrics). */
  onOutcome?: (row: DeliveryRow, result: 'delivered' | 'retry' | 'dead' | 'cancelled') => void;
  /** HTTP client; defaults to the shared guarded Agent for OUTBOUND_DENY_PRIVATE. */
  httpDispatcher?: Dispatcher;
}

/** Deliveries handled in one run of a lane before it yields to the scheduler. */
const maxPerRun = 50;
/** How long past the request timeout a claimed delivery stays this node's before others may retry it. */
const leaseMarginMs = 30_000;

export class WebhookDispatcher {
  private readonly scheduler: LaneScheduler;
  private readonly logger: Logger;
  private readonly rules: RetryRules;
  private readonly http: Dispatcher;
  private stopping = new AbortController();

  constructor(private readonly deps: WebhookDispatcherDeps) {
    this.logger = deps.logger.child({ component: 'webhook-dispatcher' });
    this.rules = { maxAttempts: deps.config.webhookRetryMaxAttempts, backoff: backoffPolicy(deps.config) };
    this.http = deps.httpDispatcher ?? sharedGuardedDispatcher(deps.config.outboundDenyPrivate);
    this.scheduler = new LaneScheduler({
      listLanes: async () => (await laneHeads(this.deps.store.db)).map((h) => ({ key: laneKey(h.lane), readyAt: h.readyAt })),
      runLane: (key) => this.runLane(key),
      maxConcurrentLanes: deps.maxConcurrentLanes ?? 64,
      pollMs: deps.pollMs ?? 1000,
      onError: (error) => this.logger.error({ err: error }, 'webhook dispatcher error'),
    });
  }

  start(): void {
    if (this.stopping.signal.aborted) this.stopping = new AbortController();
    this.scheduler.start();
  }

  /** New deliveries were queued (hand this to `EventWriter.onDeliveriesQueued`). */
  wake(): void {
    this.scheduler.wake();
  }

  /** Stops taking work and aborts requests in flight; those deliveries stay pending and are sent again later. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.scheduler.stop();
  }

  private async runLane(key: string): Promise<void> {
    const db = this.deps.store.db;
    const lane = parseLaneKey(key);
    for (let handled = 0; handled < maxPerRun && !this.stopping.signal.aborted; handled++) {
      const row = await laneHead(db, lane);
      if (!row || Number(row.next_attempt_at) > Date.now()) return;
      const leaseUntil = Date.now() + this.deps.config.webhookRequestTimeoutMs + leaseMarginMs;
      if (!(await claim(db, row, leaseUntil))) return;
      const waits = await this.attempt(row, leaseUntil);
      // A head waiting for its retry holds back the rest of its lane (per-instance order).
      if (waits) return;
    }
  }

  /** Attempts one claimed delivery and records the outcome; true when the lane must now wait. */
  private async attempt(row: DeliveryRow, leaseUntil: number): Promise<boolean> {
    const db = this.deps.store.db;
    const log = this.logger.child({
      deliveryId: row.id,
      eventId: row.event_id,
      instance: row.instance_name,
      target: row.target,
      event: row.event,
      destination: origin(row.url),
    });
    const verdict = await this.send(row, log);
    if (verdict.kind === 'cancelled') {
      await settle(db, row.id, leaseUntil, { state: 'cancelled', last_error: verdict.reason });
      this.deps.onOutcome?.(row, 'cancelled');
      log.info({ reason: verdict.reason }, 'webhook delivery cancelled');
      return false;
    }
    const outcome = settlement(verdict, row, Date.now(), this.rules);
    if (!(await settle(db, row.id, leaseUntil, outcome.patch))) {
      log.debug('webhook delivery changed meanwhile (redelivered or taken over); outcome not recorded');
      return false;
    }
    const attempt = row.attempts + 1;
    if (verdict.kind !== 'released') this.deps.onOutcome?.(row, outcome.state === 'pending' ? 'retry' : outcome.state);
    if (verdict.kind === 'delivered') log.debug({ attempt, status: verdict.status }, 'webhook delivered');
    else if (verdict.kind === 'released') return true;
    else if (outcome.state === 'dead') log.warn({ attempt, error: outcome.patch.last_error }, 'webhook delivery dead-lettered');
    else log.info({ attempt, error: verdict.error, retryAt: outcome.retryAt }, 'webhook delivery failed; will retry');
    return outcome.state === 'pending';
  }

  private async send(row: DeliveryRow, log: Logger): Promise<Verdict | { kind: 'cancelled'; reason: string }> {
    const { config } = this.deps;
    const stored = await loadEnvelope(this.deps.store.db, row.event_id);
    if (!stored) return { kind: 'rejected', status: null, error: 'event no longer in the outbox' };
    let headers: Record<string, string>;
    let body: string;
    try {
      const destination = await resolveDestination(row, { db: this.deps.store.db, config, sinks: this.deps.sinks, box: this.deps.box });
      if (destination.kind === 'cancel') return { kind: 'cancelled', reason: destination.reason };
      const envelope = await inlineMedia(row.event, stored, destination.base64, this.deps.mediaResolver, log);
      body = deliveryBody(envelope, row.url);
      headers = deliveryHeaders({ custom: destination.headers, secret: destination.secret, eventId: row.event_id, body });
    } catch (error) {
      // Unreadable secret (SECRETS_KEY changed) or malformed settings: an operator can fix it, so retry.
      return { kind: 'failed', status: null, error: shorten(`cannot prepare request: ${(error as Error).message}`) };
    }
    const result = await postWebhook({
      url: row.url,
      headers,
      body,
      timeoutMs: config.webhookRequestTimeoutMs,
      dispatcher: this.http,
      signal: this.stopping.signal,
    });
    return judge(result, config.webhookNonRetryableStatuses, config.webhookRequestTimeoutMs);
  }
}

/** Logged instead of the URL, which may carry tokens in its path or query. */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid-url';
  }
}
