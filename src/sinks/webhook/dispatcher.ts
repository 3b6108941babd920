// Delivers queued webhook deliveries: one ordered lane per (target, instance), lanes run concurrently, state kept in the store.
import { stopController } from '../../platform/util/stop-controller.js';
import type { Dispatcher } from 'undici';
import type { Config } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import { sharedGuardedDispatcher } from '../../platform/net/guarded-dispatcher.js';
import type { Store } from '../../platform/store/db.js';
import { LaneScheduler } from '../../platform/util/lanes.js';
import type { SecretsBox } from '../../platform/util/secrets-box.js';
import type { BackoffPolicy } from '../../platform/util/backoff.js';
import type { SinkConfigs } from '../../events/sink-configs.js';
import { resolveDestination } from './destination.js';
import { deliveryHeaders } from './headers.js';
import { InProcessSender, type OrderedSender, type SendRules, type WebhookRequest } from './ordered-send.js';
import type { MediaResolver } from './media-base64.js';
import { settlement, shorten, type RetryRules, type Settlement, type Verdict } from './outcome.js';
import { deliveryBody, inlineMedia } from './payload.js';
import {
  readAndClaim,
  readyHead,
  laneHeads,
  laneKey,
  parseLaneKey,
  releaseClaimsOf,
  settleMany,
  takeOverClaims,
  type DeliveryRow,
  type DeliveryWithBody,
  type Lane,
} from './queries.js';
import { timeOrderedId } from '../../platform/util/time-ordered-id.js';
import type { EventEnvelope } from '../../core/event-envelope.js';

export interface WebhookDispatcherDeps {
  store: Pick<Store, 'db'>;
  config: Config;
  sinks: SinkConfigs;
  box: SecretsBox;
  logger: Logger;
  /** Supplies media as base64 for webhooks with the `base64` option; without it payloads go unchanged. */
  mediaResolver?: MediaResolver;
  /** This node's incarnation, written on its claims (default: one of its own, for a dispatcher alone in a test). */
  claimant?: string;
  /** Safety poll for missed wake-ups and other nodes' work (default 1000 ms). */
  pollMs?: number;
  /** Lanes (receivers) served at once (default 64). */
  maxConcurrentLanes?: number;
  /** Told every recorded outcome (metrics). */
  onOutcome?: (row: DeliveryRow, result: 'delivered' | 'retry' | 'dead' | 'cancelled') => void;
  /** HTTP client of the default sender; defaults to the shared guarded Agent for OUTBOUND_DENY_PRIVATE. */
  httpDispatcher?: Dispatcher;
  /** Sends the requests; defaults to sending on this thread (the service passes a `ThreadSender`). */
  sender?: OrderedSender;
}

/** Deliveries handled in one run of a lane before it yields to the scheduler. */
const maxPerRun = 500;
/** Deliveries of a lane claimed and recorded together (the requests themselves go one after the other, in order). */
const batchSize = 100;
/** How long past the request timeout a claimed delivery stays this node's before others may retry it. */
const leaseMarginMs = 30_000;
/** Requests of a batch start at least this long before the claim's last possible answer. */
const startMarginMs = 5_000;

/** The retry waits of the configuration: exponential, capped, spread by jitter, never below the first wait. */
function backoffPolicy(config: Config): BackoffPolicy {
  return {
    initialMs: config.webhookRetryInitialDelayMs,
    maxMs: config.webhookRetryMaxDelayMs,
    factor: config.webhookRetryBackoffFactor,
    jitter: config.webhookRetryJitterFactor,
  };
}

/** The request rules of the configuration (timeout, statuses never retried). */
export function sendRules(config: Config): SendRules {
  return { timeoutMs: config.webhookRequestTimeoutMs, nonRetryable: config.webhookNonRetryableStatuses };
}

export class WebhookDispatcher {
  private readonly scheduler: LaneScheduler;
  private readonly logger: Logger;
  private readonly rules: RetryRules;
  private readonly sender: OrderedSender;
  private stopping = stopController();
  /** Per lane key: how often deliveries were queued in it (wrapping is harmless: only changes are compared). */
  private readonly generations = new Map<string, number>();
  private readonly claimant: string;

  constructor(private readonly deps: WebhookDispatcherDeps) {
    this.claimant = deps.claimant ?? timeOrderedId();
    this.logger = deps.logger.child({ component: 'webhook-dispatcher' });
    this.rules = { maxAttempts: deps.config.webhookRetryMaxAttempts, backoff: backoffPolicy(deps.config) };
    this.sender = deps.sender ?? new InProcessSender(sendRules(deps.config), deps.httpDispatcher ?? sharedGuardedDispatcher(deps.config.outboundDenyPrivate));
    this.scheduler = new LaneScheduler({
      listLanes: async () => (await laneHeads(this.deps.store.db)).map((h) => ({ key: laneKey(h.lane), readyAt: h.readyAt })),
      runLane: (key) => this.runLane(key),
      maxConcurrentLanes: deps.maxConcurrentLanes ?? 64,
      pollMs: deps.pollMs ?? 1000,
      onError: (error) => this.logger.error({ err: error }, 'webhook dispatcher error'),
    });
  }

  start(): void {
    if (this.stopping.signal.aborted) this.stopping = stopController();
    this.sender.start();
    this.scheduler.start();
  }

  /** Look for work now (redeliveries, polls). */
  wake(): void {
    this.scheduler.wake();
  }

  /** New deliveries were queued in these lanes (hand this to `EventWriter.onDeliveriesQueued`): busy lanes find them. */
  wakeLanes(lanes: Lane[]): void {
    for (const lane of lanes) {
      const key = laneKey(lane);
      // Counted so a lane being sent knows there is more to claim ahead of its next batch.
      this.generations.set(key, this.generationOf(key) + 1);
      this.scheduler.wakeLane(key);
    }
  }

  /**
   * Stops taking work and aborts requests in flight; those deliveries stay pending, their claims given back (due at
   * once for the other nodes or the next start).
   */
  async stop(): Promise<void> {
    this.stopping.abort();
    const senderStopped = this.sender.stop();
    await this.scheduler.stop();
    await senderStopped;
    await releaseClaimsOf(this.deps.store.db, this.claimant, Date.now()).catch((error: unknown) =>
      this.logger.warn({ err: error }, 'webhook claims not given back at stop; they run out with their leases'),
    );
  }

  /**
   * Takes over the claims of every node incarnation not in `live` (dead or stopped): their deliveries are due now and
   * are sent by whichever live node scans first, instead of after their leases. Answers how many were taken over.
   */
  async takeOverFrom(live: readonly string[]): Promise<number> {
    const taken = await takeOverClaims(this.deps.store.db, live, Date.now());
    if (taken > 0) {
      this.logger.info({ deliveries: taken }, 'webhook deliveries claimed by a dead node taken over');
      this.scheduler.wake();
    }
    return taken;
  }

  /**
   * Delivers a lane's ready deliveries in order; answers when it should run again, if it has more to do. Pipelined:
   * while a batch is being sent, the next one is read and claimed, and a batch's outcomes are recorded while the next
   * is sent, so the store's round trips are not on the lane's path (the requests themselves still go one by one).
   */
  private async runLane(key: string): Promise<number | undefined> {
    const lane = parseLaneKey(key);
    const settles = new SettleChain();
    let handled = 0;
    let claimed = this.claimBatch(lane, key);
    try {
      for (;;) {
        const batch = await claimed.then(takeResult);
        settles.check();
        // (Only a claim the loop started comes here; none is pending once it decided to stop.)
        if (!batch) return undefined;
        if (this.stopping.signal.aborted) {
          await this.release(batch);
          return Date.now();
        }
        // Nothing of ours at the head: it waits for a retry (or another node holds it).
        if (batch.mine.length === 0) {
          await this.release(batch);
          await settles.done();
          if (batch.rows.length > 0) return batch.ready.length === 0 ? Number(batch.rows[0].next_attempt_at) : undefined;
          this.sawAll(key, batch);
          return undefined;
        }
        // More after this batch (it was full, or deliveries were queued after it was read): claim them meanwhile.
        const more =
          batch.firstTaken === -1 &&
          handled + batch.mine.length < maxPerRun &&
          (batch.rows.length === batchSize || this.generationOf(key) !== batch.generationAfterRead);
        claimed = more ? this.claimBatch(lane, key, batch.mine[batch.mine.length - 1].id) : Promise.resolve(undefined);
        // No request starts once the claim could run out before its answer.
        const run = await this.attemptInOrder(batch.mine, batch.now, batch.leaseUntil - this.deps.config.webhookRequestTimeoutMs - startMarginMs);
        handled += run.outcomes.length;
        const attempted = new Set(run.outcomes.map((o) => o.row.id));
        const release = batch.ready.filter((row) => batch.held.has(row.id) && !attempted.has(row.id)).map((row) => row.id);
        settles.add(() => this.settle(batch.leaseUntil, run.outcomes, release));
        if (run.waits || batch.firstTaken !== -1 || !more) {
          // The claimed next batch waits behind a held lane: it goes back, in order, for the next run.
          await this.release(await claimed.then(takeResult));
          await settles.done();
          if (run.waits || batch.firstTaken !== -1) return run.retryAt;
          // A short batch, all of it ready, with nothing queued since, was the whole lane: done (deliveries queued
          // later wake the lane again). Otherwise its share of this turn is used up: it runs again after other work.
          if (batch.rows.length < batchSize && batch.ready.length === batch.rows.length && handled < maxPerRun) {
            this.sawAll(key, batch);
            return undefined;
          }
          return Date.now();
        }
      }
    } catch (error) {
      // A claim still in flight is left to its lease (its deliveries are attempted again once it runs out).
      await settles.done().catch(() => undefined);
      throw error;
    }
  }

  /** Reads the lane's next batch (after `afterId`) and claims its ready head for this node until a fresh lease. */
  private async claimBatch(lane: Lane, key: string, afterId?: number): Promise<ClaimResult> {
    try {
      const db = this.deps.store.db;
      const generation = this.generationOf(key);
      const now = Date.now();
      // A lease value of this claim only (ms of jitter), so the ids it holds can be read back.
      const leaseUntil = now + this.deps.config.webhookRequestTimeoutMs + leaseMarginMs + Math.floor(Math.random() * 1000);
      const { rows, held } = await readAndClaim(db, lane, batchSize, afterId, now, { leaseUntil, claimant: this.claimant });
      const generationAfterRead = this.generationOf(key);
      const ready = readyHead(rows, now, held);
      // Deliveries taken by another node meanwhile, and all after them, wait for the next run, in order.
      const firstTaken = ready.findIndex((row) => !held.has(row.id));
      const mine = firstTaken === -1 ? ready : ready.slice(0, firstTaken);
      return { batch: { rows, ready, held, mine, firstTaken, now, leaseUntil, generation, generationAfterRead } };
    } catch (error) {
      // Kept as a value until the lane awaits it (a rejection nobody awaits yet would end the process).
      return { error };
    }
  }

  /** Gives claimed deliveries back (due now), so the lane's next run takes them in order. */
  private async release(batch: ClaimedBatch | undefined): Promise<void> {
    if (!batch || batch.held.size === 0) return;
    await settleMany(this.deps.store.db, batch.leaseUntil, [], [...batch.held], Date.now());
  }

  /** Records a batch's outcomes (each only if its claim still holds), releases the rest, then reports them. */
  private async settle(leaseUntil: number, outcomes: Outcome[], release: number[]): Promise<void> {
    const recorded = await settleMany(
      this.deps.store.db,
      leaseUntil,
      outcomes.map((o) => ({ id: o.row.id, patch: o.patch })),
      release,
      Date.now(),
    );
    for (const outcome of outcomes) {
      if (recorded.has(outcome.row.id)) this.report(outcome.row, outcome.result, outcome.patch);
      else this.logger.debug({ deliveryId: outcome.row.id }, 'webhook delivery changed meanwhile (redelivered or taken over); outcome not recorded');
    }
  }

  /** The lane was read whole, and nothing was queued in it since that read began: wake-ups meanwhile are answered. */
  private sawAll(key: string, batch: ClaimedBatch): void {
    if (this.generationOf(key) === batch.generation) this.scheduler.seen(key);
  }

  private generationOf(key: string): number {
    return this.generations.get(key) ?? 0;
  }

  /**
   * Attempts claimed deliveries of one lane in order: requests go to the sender in runs (it stops at the first that
   * holds the lane); a delivery that cannot even be prepared is judged here. `waits`: the rest of the lane waits.
   */
  private async attemptInOrder(
    rows: DeliveryWithBody[],
    batchStartedAt: number,
    startBefore: number,
  ): Promise<{ outcomes: Outcome[]; waits: boolean; retryAt?: number }> {
    const prepared: Prepared[] = [];
    for (const row of rows) prepared.push(await this.prepare(row));
    const outcomes: Outcome[] = [];
    let i = 0;
    while (i < prepared.length) {
      const item = prepared[i];
      if ('verdict' in item) {
        const outcome = this.outcomeOf(item.row, item.verdict, batchStartedAt);
        if (!outcome) return { outcomes, waits: true };
        outcomes.push(outcome);
        if (outcome.result === 'retry') return { outcomes, waits: true, retryAt: Number(outcome.patch.next_attempt_at) };
        i++;
        continue;
      }
      let end = i;
      while (end < prepared.length && !('verdict' in prepared[end])) end++;
      const batch = prepared.slice(i, end) as { row: DeliveryWithBody; request: WebhookRequest }[];
      const verdicts = await this.sender.send(
        batch.map((b) => b.request),
        startBefore,
      );
      for (let k = 0; k < verdicts.length; k++) {
        const outcome = this.outcomeOf(batch[k].row, verdicts[k], batchStartedAt);
        if (!outcome) return { outcomes, waits: true };
        // The log shows where the delivery last went (the webhook's URL may have changed since the event).
        if (batch[k].request.url !== batch[k].row.url) outcome.patch = { ...outcome.patch, url: batch[k].request.url };
        outcomes.push(outcome);
        if (outcome.result === 'retry') return { outcomes, waits: true, retryAt: Number(outcome.patch.next_attempt_at) };
      }
      // The sender stopped early without a verdict that holds the lane: the claim's time was up (the lane goes on at
      // once), or it is stopping or restarting (nothing attempted: the next poll looks again).
      if (verdicts.length < batch.length) return { outcomes, waits: true, retryAt: verdicts.length > 0 ? Date.now() : undefined };
      i = end;
    }
    return { outcomes, waits: false };
  }

  /** What to record for a verdict; undefined for `released` (the attempt did not count). */
  private outcomeOf(row: DeliveryWithBody, verdict: Verdict | Cancelled, batchStartedAt: number): Outcome | undefined {
    if (verdict.kind === 'cancelled') return { row, patch: { state: 'cancelled', last_error: verdict.reason }, result: 'cancelled' };
    if (verdict.kind === 'released') return undefined;
    // Deliveries share the batch's time, so alike outcomes are recorded by one statement (delivered_at is the
    // batch's start); a retry waits from the failure itself.
    const outcome = settlement(verdict, row, verdict.kind === 'delivered' ? batchStartedAt : Date.now(), this.rules);
    return { row, patch: outcome.patch, result: outcome.state === 'pending' ? 'retry' : outcome.state === 'delivered' ? 'delivered' : 'dead' };
  }

  /** Metrics and logs of a recorded outcome (a child logger only when something is worth a line). */
  private report(row: DeliveryRow, result: 'delivered' | 'retry' | 'dead' | 'cancelled', patch: Settlement['patch']): void {
    this.deps.onOutcome?.(row, result);
    if (result === 'delivered') return;
    const log = this.logger.child({
      deliveryId: row.id,
      eventId: row.event_id,
      instance: row.instance_name,
      target: row.target,
      event: row.event,
      destination: origin(row.url),
    });
    const attempt = row.attempts + 1;
    if (result === 'cancelled') log.info({ reason: patch.last_error }, 'webhook delivery cancelled');
    else if (result === 'dead') log.warn({ attempt, error: patch.last_error }, 'webhook delivery dead-lettered');
    else log.info({ attempt, error: patch.last_error, retryAt: patch.next_attempt_at }, 'webhook delivery failed; will retry');
  }

  /** The request of a delivery as its webhook stands now, or the verdict when there is nothing to send. */
  private async prepare(row: DeliveryWithBody): Promise<Prepared> {
    const { config } = this.deps;
    if (row.body === null) return { row, verdict: { kind: 'rejected', status: null, error: 'event no longer in the outbox' } };
    const stored = JSON.parse(row.body) as EventEnvelope;
    try {
      const destination = await resolveDestination(row, { db: this.deps.store.db, config, sinks: this.deps.sinks, box: this.deps.box });
      if (destination.kind === 'cancel') return { row, verdict: { kind: 'cancelled', reason: destination.reason } };
      const envelope = await inlineMedia(row.event, stored, destination.base64, this.deps.mediaResolver, this.logger);
      const body = deliveryBody(envelope, destination.destination);
      const headers = deliveryHeaders({ custom: destination.headers, secret: destination.secret, eventId: row.event_id, body });
      return { row, request: { url: destination.url, headers, body, lastAttempt: row.attempts + 1 >= this.rules.maxAttempts } };
    } catch (error) {
      // Unreadable secret (SECRETS_KEY changed) or malformed settings: an operator can fix it, so retry.
      return { row, verdict: { kind: 'failed', status: null, error: shorten(`cannot prepare request: ${(error as Error).message}`) } };
    }
  }
}

type Cancelled = { kind: 'cancelled'; reason: string };

/** A lane's batch as read and claimed: `mine` are the deliveries this node now holds, in order, from the head. */
interface ClaimedBatch {
  rows: DeliveryWithBody[];
  ready: DeliveryWithBody[];
  held: Set<number>;
  mine: DeliveryWithBody[];
  /** Index in `ready` of the first delivery another node took, or -1. */
  firstTaken: number;
  now: number;
  leaseUntil: number;
  /** The lane's generation when the batch's read began (everything queued before it was seen). */
  generation: number;
  /**
   * Its generation when the read answered: a change after it is deliveries the read cannot have seen (one between the
   * two may have been seen already; the lane's next run looks for it, rather than a read ahead that may come back empty).
   */
  generationAfterRead: number;
}
type ClaimResult = { batch: ClaimedBatch } | { error: unknown } | undefined;

function takeResult(result: ClaimResult): ClaimedBatch | undefined {
  if (result && 'error' in result) throw result.error;
  return result?.batch;
}

/** Outcomes being recorded one batch after the other, off the lane's path; the first failure is kept for the lane. */
class SettleChain {
  private tail: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | undefined;

  add(work: () => Promise<void>): void {
    this.tail = this.tail.then(work).catch((error: unknown) => {
      this.failure ??= { error };
    });
  }

  /** Throws the first failure so far (the lane stops; unrecorded deliveries are attempted again after their lease). */
  check(): void {
    if (this.failure) throw this.failure.error;
  }

  async done(): Promise<void> {
    await this.tail;
    this.check();
  }
}
type Prepared = { row: DeliveryWithBody; request: WebhookRequest } | { row: DeliveryWithBody; verdict: Verdict | Cancelled };
type Outcome = { row: DeliveryRow; patch: Settlement['patch']; result: 'delivered' | 'retry' | 'dead' | 'cancelled' };

/** Logged instead of the URL, which may carry tokens in its path or query. */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid-url';
  }
}
