// Publishes the outbox to one broker in seq order from a stored cursor; the cursor moves only past confirmed events.
import type { LeaseNode } from '../../platform/cluster/job-lease.js';
import type { Logger } from '../../platform/logger.js';
import type { Db, Dialect } from '../../platform/store/db.js';
import { delayFor, type BackoffPolicy } from '../../platform/util/backoff.js';
import { CursorStore } from './cursors.js';
import { OutboxFeed, type FeedOptions, type OutboxRow } from '../../events/outbox-feed.js';
import { PublicationRefused, type BrokerPublisher, type Publication } from './publisher.js';
import type { BrokerRouter } from './routing.js';

export interface RelayOptions {
  /** Cursor name and log component: `rabbitmq`, `nats`. */
  name: string;
  db: Db;
  dialect: Dialect;
  publisher: BrokerPublisher;
  router: BrokerRouter;
  logger: Logger;
  /** This node: its incarnation holds the relay's lease while its heartbeat is recent. */
  node: LeaseNode;
  /** Safety poll when no wake-up comes, and how often a standby node tries the lease (default 1000 ms). */
  pollMs?: number;
  /** Outbox rows read per round (default 200). */
  batchSize?: number;
  /** Waits after failed rounds (default 250 ms doubling to 30 s, ±20 %). */
  backoff?: BackoffPolicy;
  /** Tries before a publication the broker keeps refusing for good is dropped (default 3). */
  maxRefusals?: number;
  feed?: FeedOptions;
}

interface Waiter {
  wakeable: boolean;
  done(): void;
}

const defaultBackoff: BackoffPolicy = { initialMs: 250, maxMs: 30_000, factor: 2, jitter: 0.2 };

export class OutboxRelay {
  private readonly cursor: CursorStore;
  private readonly feed: OutboxFeed;
  private readonly logger: Logger;
  private readonly pollMs: number;
  private readonly batchSize: number;
  private readonly backoff: BackoffPolicy;
  private readonly maxRefusals: number;
  private readonly refusals = new Map<string, { seq: number; count: number }>();
  private readonly waiters = new Set<Waiter>();
  private woken = false;
  private stopped = true;
  private leader = false;
  private running: Promise<void> | undefined;

  constructor(private readonly options: RelayOptions) {
    this.logger = options.logger.child({ component: `${options.name}-relay` });
    this.pollMs = options.pollMs ?? 1000;
    this.batchSize = options.batchSize ?? 200;
    this.backoff = options.backoff ?? defaultBackoff;
    this.maxRefusals = options.maxRefusals ?? 3;
    this.cursor = new CursorStore(options.db, options.name, options.node);
    this.feed = new OutboxFeed(options.db, options.dialect, this.logger, options.feed);
  }

  /** Creates the cursor when missing (a new one starts after the newest event) and starts relaying. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    await this.cursor.init(await this.feed.head());
    this.stopped = false;
    this.running = this.loop();
  }

  /** New events were committed, or the live nodes changed (a standby tries the lease at once). */
  wake(): void {
    this.woken = true;
    for (const waiter of this.waiters) if (waiter.wakeable) waiter.done();
  }

  /** Stops after the round in flight (unconfirmed events stay in the outbox) and hands the lease back. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const waiter of this.waiters) waiter.done();
    // Dropping the connection ends a round waiting for confirms; the second reset closes one opened meanwhile.
    await this.options.publisher.reset().catch(() => undefined);
    await this.running;
    this.running = undefined;
    await this.options.publisher.reset().catch(() => undefined);
    if (this.leader) await this.cursor.release().catch(() => undefined);
    this.leader = false;
  }

  /** Whether this node relays now (it held the lease at its last round). */
  get active(): boolean {
    return this.leader;
  }

  /** The incarnation relaying now, if any. */
  holder(): Promise<string | undefined> {
    return this.cursor.holder();
  }

  /** The seq of the last event handled (published or not wanted). */
  position(): Promise<number | undefined> {
    return this.cursor.position();
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      let pause: number;
      let wakeable = true;
      try {
        pause = await this.round();
        if (failures > 0) this.logger.info({ failures }, `${this.options.name} relay recovered`);
        failures = 0;
      } catch (error) {
        if (this.stopped) break;
        if (error instanceof PublicationRefused && error.permanent) {
          // The broker answered and refused one publication: not an outage. Tried again soon (it is dropped after a
          // few refusals), on the same connection, without growing the wait for everything behind it.
          pause = delayFor(this.backoff, 1);
          this.logger.warn({ retryInMs: pause, error: message(error) }, `${this.options.name} refused a publication`);
        } else {
          failures++;
          pause = delayFor(this.backoff, failures);
          // Wake-ups do not cut a backoff short: a burst of events must not hammer a broker that is down.
          wakeable = false;
          this.logger.warn({ attempt: failures, retryInMs: pause, error: message(error) }, `${this.options.name} relay round failed`);
          await this.options.publisher.reset().catch(() => undefined);
        }
      }
      if (pause > 0 && !this.stopped) await this.sleep(pause, wakeable);
    }
  }

  /** One round: claim, read, publish, confirm, advance. Answers how long to wait before the next. */
  private async round(): Promise<number> {
    this.woken = false;
    const position = await this.cursor.claim();
    if (position === undefined) {
      if (this.leader) this.logger.info(`${this.options.name} relay lease taken by another node`);
      this.leader = false;
      return this.pollMs;
    }
    if (!this.leader) this.logger.info({ position }, `${this.options.name} relay active on this node`);
    this.leader = true;
    const batch = await this.feed.next(position, this.batchSize);
    if (batch.rows.length === 0) {
      if (batch.through > position) await this.cursor.advance(batch.through);
      return batch.recheckInMs ?? this.pollMs;
    }
    const { through, failure } = await this.publish(batch.rows, position, batch.through);
    if (through > position && !(await this.cursor.advance(through))) {
      this.logger.warn(`${this.options.name} relay lost its lease while publishing; another node continues`);
    }
    if (failure !== undefined) throw failure;
    // A full batch means more may be waiting: go on at once. Wake-ups during the round also skip the wait.
    return batch.rows.length === this.batchSize ? 0 : (batch.recheckInMs ?? this.pollMs);
  }

  /**
   * Publishes the rows in order (pipelined), then walks the confirmations in order: answers the last seq
   * up to which everything is confirmed, and the first failure that stopped it.
   */
  private async publish(rows: OutboxRow[], position: number, batchThrough: number): Promise<{ through: number; failure?: unknown }> {
    const { publisher, router } = this.options;
    const planned: Planned[] = [];
    let broken: unknown;
    for (const row of rows) {
      const entry: Planned = { row, items: [], complete: true };
      planned.push(entry);
      for (const publication of router.route(row)) {
        try {
          const { confirmed } = await publisher.send(publication);
          entry.items.push({ publication, confirmed: handled(confirmed) });
        } catch (error) {
          entry.items.push({ publication, confirmed: handled(Promise.reject(error)) });
          // A refusal concerns this publication only; anything else means the connection is gone.
          if (!(error instanceof PublicationRefused)) {
            entry.complete = false;
            broken = error;
            break;
          }
        }
      }
      if (broken !== undefined) break;
    }
    const settled = await Promise.all(planned.map(({ items }) => Promise.allSettled(items.map((item) => item.confirmed))));
    let through = position;
    let failure: unknown;
    for (let i = 0; i < planned.length; i++) {
      const { row, items, complete } = planned[i];
      for (let j = 0; j < items.length; j++) {
        const outcome = settled[i][j];
        // Every refusal of the batch is counted in this round (not one row per round), so several refused events
        // are dropped after the same few rounds instead of holding the relay for rounds on end.
        if (outcome.status === 'rejected' && !this.givesUp(row, items[j].publication, outcome.reason)) failure ??= outcome.reason;
      }
      if (failure !== undefined) continue;
      if (!complete) return { through, failure: broken };
      for (const { publication } of items) {
        this.logger.debug(
          { instance: row.instanceName, event: publication.event, eventId: row.id, scope: publication.scope, target: publication.target },
          'event published',
        );
      }
      through = row.seq;
    }
    if (failure !== undefined) return { through, failure };
    for (const [key, refusal] of this.refusals) if (refusal.seq <= through) this.refusals.delete(key);
    // Every row of the batch is out: settled gaps after the last row are passed too.
    return { through: Math.max(through, batchThrough) };
  }

  /** True when a refused publication is dropped (refused for good, often enough); false to try again later. */
  private givesUp(row: OutboxRow, publication: Publication, reason: unknown): boolean {
    if (!(reason instanceof PublicationRefused) || !reason.permanent) return false;
    const key = `${row.id}|${publication.scope}|${publication.target}`;
    const refusal = this.refusals.get(key) ?? { seq: row.seq, count: 0 };
    refusal.count++;
    this.refusals.set(key, refusal);
    if (refusal.count < this.maxRefusals) return false;
    this.logger.error(
      { instance: row.instanceName, event: publication.event, eventId: row.id, scope: publication.scope, target: publication.target, error: reason.message },
      `${this.options.name} refuses this event for good; it is skipped for this destination`,
    );
    return true;
  }

  private sleep(ms: number, wakeable: boolean): Promise<void> {
    if (wakeable && this.woken) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: Waiter = {
        wakeable,
        done: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.done, ms);
      this.waiters.add(waiter);
    });
  }
}

interface Planned {
  row: OutboxRow;
  items: { publication: Publication; confirmed: Promise<void> }[];
  /** False when the connection failed before every publication of the row was handed over. */
  complete: boolean;
}

/** Marks a promise as handled now (its outcome is read later), so an early rejection is not reported as unhandled. */
function handled(promise: Promise<void>): Promise<void> {
  promise.catch(() => undefined);
  return promise;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
