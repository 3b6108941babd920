// Reads the outbox in `seq` order for a reader (a broker relay, websocket delivery), holding back at gaps until they can no longer fill.
//
// On PostgreSQL a sequence number is taken when a row is inserted, but rows become visible when their
// transaction commits, so seq 11 may be seen before seq 10. A relay that moved its cursor past 10 would
// never publish it. A gap is therefore only passed once it is settled: every transaction that was running
// when the gap was first seen has ended (snapshot xmin has passed the xmax seen then), or, as a last
// resort, after `gapMaxWaitMs`. SQLite has one writer at a time and commits in seq order: gaps are final.
import { sql } from 'kysely';
import type { Logger } from '../platform/logger.js';
import type { Db, Dialect } from '../platform/store/db.js';

export interface OutboxRow {
  seq: number;
  id: string;
  instanceId: string | null;
  instanceName: string;
  /** Catalogue name (`MESSAGES_UPSERT`). */
  event: string;
  /** The JSON envelope as stored (no `destination`). */
  body: string;
  /** Brokers the instance's settings wanted it on when it was written (`brokerBit`); null for events older than that record. */
  brokerWants: number | null;
}

export interface FeedBatch {
  /** Rows to publish, in seq order. */
  rows: OutboxRow[];
  /** The cursor may move to this seq once `rows` are published (covers settled gaps too). */
  through: number;
  /** Set when an unsettled gap held the batch back: look again after this many ms. */
  recheckInMs?: number;
}

export interface FeedOptions {
  /** A gap is never passed sooner than this after it was first seen on PostgreSQL (default 50 ms). */
  gapSettleMs?: number;
  /** A gap is passed after this long even if old transactions still run (default 30 s). */
  gapMaxWaitMs?: number;
}

interface GapObservation {
  at: number;
  /** PostgreSQL snapshot xmax when the gap was first seen. */
  xmax: bigint;
}

export class OutboxFeed {
  /** Gaps seen, keyed by the seq of the visible row just after the gap. */
  private readonly gaps = new Map<number, GapObservation>();
  private readonly settleMs: number;
  private readonly maxWaitMs: number;

  constructor(
    private readonly db: Db,
    private readonly dialect: Dialect,
    private readonly logger: Logger,
    options: FeedOptions = {},
  ) {
    this.settleMs = options.gapSettleMs ?? 50;
    this.maxWaitMs = options.gapMaxWaitMs ?? 30_000;
  }

  /** The newest seq in the outbox (a new cursor starts there: history is not replayed). */
  async head(): Promise<number> {
    const row = await this.db
      .selectFrom('outbox')
      .select((eb) => eb.fn.max('seq').as('max'))
      .executeTakeFirst();
    return Number(row?.max ?? 0);
  }

  async next(after: number, limit: number): Promise<FeedBatch> {
    // Taken before the rows are read: a transaction that ended before it has its rows in what we read.
    const before = this.dialect === 'postgres' && this.gaps.size > 0 ? await currentSnapshot(this.db) : undefined;
    const found = await this.db
      .selectFrom('outbox')
      .select(['seq', 'id', 'instance_id', 'instance_name', 'event', 'body', 'broker_wants'])
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(limit)
      .execute();
    const rows: OutboxRow[] = [];
    let through = after;
    let recheckInMs: number | undefined;
    for (const row of found) {
      const seq = Number(row.seq);
      if (seq > through + 1 && this.dialect === 'postgres') {
        const wait = await this.gapWait(seq, through, before);
        if (wait > 0) {
          recheckInMs = wait;
          break;
        }
      }
      rows.push({
        seq,
        id: row.id,
        instanceId: row.instance_id,
        instanceName: row.instance_name,
        event: row.event,
        body: row.body,
        brokerWants: row.broker_wants === null ? null : Number(row.broker_wants),
      });
      through = seq;
    }
    for (const key of this.gaps.keys()) if (key <= through) this.gaps.delete(key);
    return { rows, through, recheckInMs };
  }

  /** 0 when the gap before `seq` is settled, else how long to wait before looking again. */
  private async gapWait(seq: number, through: number, before: Snapshot | undefined): Promise<number> {
    const now = Date.now();
    const seen = this.gaps.get(seq);
    if (!seen) {
      // Taken after the read, so its xmax covers every transaction that may still hold a missing seq.
      this.gaps.set(seq, { at: now, xmax: (await currentSnapshot(this.db)).xmax });
      return Math.max(10, this.settleMs);
    }
    const age = now - seen.at;
    if (before && age >= this.settleMs && before.xmin >= seen.xmax) return 0;
    if (age >= this.maxWaitMs) {
      this.logger.warn(
        { from: through + 1, to: seq - 1, waitedMs: age },
        'outbox gap passed after the longest wait; a transaction older than it is still open',
      );
      return 0;
    }
    // Usually the missing rows commit within milliseconds; look often at first, then less.
    return age < this.settleMs ? this.settleMs - age : Math.min(250, Math.max(20, Math.round(age / 4)));
  }
}

interface Snapshot {
  xmin: bigint;
  xmax: bigint;
}

async function currentSnapshot(db: Db): Promise<Snapshot> {
  const result = await sql<{ xmin: string; xmax: string }>`
    select pg_snapshot_xmin(s)::text as xmin, pg_snapshot_xmax(s)::text as xmax from (select pg_current_snapshot() as s) as snap
  `.execute(db);
  const row = result.rows[0];
  return { xmin: BigInt(row.xmin), xmax: BigInt(row.xmax) };
}
