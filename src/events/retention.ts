// Retention of the event log: delivered and cancelled deliveries and fully handled outbox events older than the window go.
import type { JobLease } from '../platform/cluster/job-lease.js';
import type { Db } from '../platform/store/db.js';
import type { Logger } from '../platform/logger.js';

const sweepEveryMs = 3600_000;
const rowsPerStatement = 5_000;

/**
 * Keeps `deliveries` and `outbox` from growing forever. Never removed: pending or dead deliveries (they may still be
 * delivered or replayed), and events a broker relay has not passed yet. In a fleet it runs on one node at a time: the
 * node holding the `event-retention` lease (taken over when its holder is dead or stopped).
 */
export class EventRetention {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly retentionMs: number,
    private readonly logger: Logger,
    /** The brokers relaying now (their cursors' names): a broker switched off holds no event back. */
    private readonly relayingBrokers: string[] = [],
    /** The fleet's retention lease; without it this node sweeps on its own. */
    private readonly lease?: JobLease,
  ) {}

  start(): void {
    const run = () => {
      void this.run().catch((error: unknown) => this.logger.error({ err: error }, 'event retention sweep failed'));
      this.timer = setTimeout(run, sweepEveryMs);
      this.timer.unref();
    };
    this.timer = setTimeout(run, 60_000);
    this.timer.unref();
  }

  /** Stops sweeping and hands the lease back, so another node sweeps next. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.lease?.release().catch((error: unknown) => this.logger.warn({ err: error }, 'event retention lease not released'));
  }

  /** One scheduled run: sweeps when this node holds the fleet's retention lease; undefined when another node does. */
  async run(now = Date.now()): Promise<{ deliveries: number; events: number } | undefined> {
    if (this.lease && !(await this.lease.claim())) {
      this.logger.debug('event retention runs on another node');
      return undefined;
    }
    return this.sweep(now);
  }

  /** Removes what is past the window; answers how many deliveries and events went. */
  async sweep(now = Date.now()): Promise<{ deliveries: number; events: number }> {
    const before = now - this.retentionMs;
    let deliveries = 0;
    for (;;) {
      const batch = await this.db
        .selectFrom('deliveries')
        .select('id')
        .where('state', 'in', ['delivered', 'cancelled'])
        .where('created_at', '<', before)
        .limit(rowsPerStatement)
        .execute();
      if (batch.length === 0) break;
      const ids = batch.map((r) => r.id);
      await this.db.deleteFrom('deliveries').where('id', 'in', ids).execute();
      deliveries += batch.length;
    }
    const relayed =
      this.relayingBrokers.length === 0
        ? undefined
        : await this.db
            .selectFrom('broker_cursors')
            .select((eb) => eb.fn.min('last_seq').as('seq'))
            .where('sink', 'in', this.relayingBrokers)
            .executeTakeFirst();
    let events = 0;
    for (;;) {
      let query = this.db
        .selectFrom('outbox')
        .select('seq')
        .where('created_at', '<', before)
        .where('id', 'not in', this.db.selectFrom('deliveries').select('event_id'))
        .limit(rowsPerStatement);
      if (relayed?.seq !== null && relayed?.seq !== undefined) query = query.where('seq', '<=', Number(relayed.seq));
      const batch = await query.execute();
      if (batch.length === 0) break;
      const seqs = batch.map((r) => r.seq);
      await this.db.deleteFrom('outbox').where('seq', 'in', seqs).execute();
      events += batch.length;
    }
    if (deliveries + events > 0) this.logger.info({ deliveries, events }, 'old event log removed');
    return { deliveries, events };
  }
}
