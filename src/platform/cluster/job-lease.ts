// A singleton job of the fleet (a broker relay, event retention): run by one live node incarnation at a time.
import { sql } from 'kysely';
import type { Db } from '../store/db.js';
import { liveNodes } from './node-queries.js';

/** The node a lease is held for: its incarnation, and when a silent node counts as dead (NODE_DEAD_AFTER_MS). */
export interface LeaseNode {
  incarnation: string;
  deadAfterMs: number;
}

/**
 * The lease of one job (`job_leases`). Its holder keeps it for as long as its heartbeat is recent: another node takes
 * it over as soon as the holder is known dead or stopped (NODE_DEAD_AFTER_MS), or at once when the holder releases it.
 * A node whose own heartbeat is old takes and keeps nothing, so a node cut off from the store stops on its own.
 */
export class JobLease {
  constructor(
    private readonly db: Db,
    /** The job's name: `rabbitmq-relay`, `nats-relay`, `event-retention`. */
    readonly job: string,
    private readonly node: LeaseNode,
  ) {}

  /** Takes the job when it is free or its holder is gone, keeps it when held already; true when this node holds it. */
  async claim(now = Date.now()): Promise<boolean> {
    const me = this.node.incarnation;
    const aliveSince = now - this.node.deadAfterMs;
    await this.db
      .insertInto('job_leases')
      .values({ job: this.job, holder: me, since: now })
      .onConflict((oc) => oc.column('job').doNothing())
      .execute();
    const taken = await this.db
      .updateTable('job_leases')
      .set({ holder: me, since: sql<number>`case when holder = ${me} then since else ${now} end` })
      .where('job', '=', this.job)
      .where(({ exists }) => exists(liveNodes(this.db, aliveSince).where('nodes.incarnation', '=', me)))
      .where((eb) =>
        eb.or([eb('holder', '=', me), eb.not(eb.exists(liveNodes(this.db, aliveSince).where('nodes.incarnation', '=', eb.ref('job_leases.holder'))))]),
      )
      .executeTakeFirst();
    return Number(taken.numUpdatedRows) === 1;
  }

  /** Gives the job up (a clean stop): another node takes it at its next try. */
  async release(): Promise<void> {
    await this.db.deleteFrom('job_leases').where('job', '=', this.job).where('holder', '=', this.node.incarnation).execute();
  }

  /** The incarnation holding the job now, if any (alive or not). */
  async holder(): Promise<string | undefined> {
    const row = await this.db.selectFrom('job_leases').select('holder').where('job', '=', this.job).executeTakeFirst();
    return row?.holder;
  }
}
