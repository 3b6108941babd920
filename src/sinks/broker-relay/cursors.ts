// Each broker relay's cursor (`broker_cursors`: how far the outbox is published) and its lease (which node publishes).
import { sql } from 'kysely';
import { JobLease, type LeaseNode } from '../../platform/cluster/job-lease.js';
import type { Db } from '../../platform/store/db.js';

export class CursorStore {
  private readonly lease: JobLease;

  constructor(
    private readonly db: Db,
    /** Cursor name: `rabbitmq`, `nats`. */
    readonly sink: string,
    /** This node: the lease is held by its incarnation while its heartbeat is recent. */
    private readonly node: LeaseNode,
  ) {
    this.lease = new JobLease(db, `${sink}-relay`, node);
  }

  /** Creates this cursor when missing (a new one starts at `startSeq`). */
  async init(startSeq: number): Promise<void> {
    await this.db
      .insertInto('broker_cursors')
      .values({ sink: this.sink, last_seq: startSeq, updated_at: Date.now() })
      .onConflict((oc) => oc.column('sink').doNothing())
      .execute();
  }

  /** Takes or keeps the lease; answers the cursor position, or undefined while another live node holds the lease. */
  async claim(): Promise<number | undefined> {
    if (!(await this.lease.claim())) return undefined;
    return this.position();
  }

  /** Moves the cursor forward (never back); false when this node no longer holds the lease. */
  async advance(seq: number): Promise<boolean> {
    const result = await this.db
      .updateTable('broker_cursors')
      .set((eb) => ({
        last_seq: sql<number>`case when ${eb.ref('last_seq')} < ${seq} then ${seq} else ${eb.ref('last_seq')} end`,
        updated_at: Date.now(),
      }))
      .where('sink', '=', this.sink)
      .where(({ exists, selectFrom }) =>
        exists(selectFrom('job_leases').select('job').where('job', '=', this.lease.job).where('holder', '=', this.node.incarnation)),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Gives the lease up (on stop) so another node takes over at its next try. */
  async release(): Promise<void> {
    await this.lease.release();
  }

  /** The incarnation relaying now, if any. */
  holder(): Promise<string | undefined> {
    return this.lease.holder();
  }

  async position(): Promise<number | undefined> {
    const row = await this.db.selectFrom('broker_cursors').select('last_seq').where('sink', '=', this.sink).executeTakeFirst();
    return row ? Number(row.last_seq) : undefined;
  }
}
