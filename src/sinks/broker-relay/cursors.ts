// Each broker relay's cursor (`broker_cursors`: how far the outbox is published) and lease (`broker_leases`: which node publishes).
import { sql, type Kysely } from 'kysely';
import type { Db } from '../../platform/store/db.js';
import type { Database } from '../../platform/store/schema.js';

/** Row type of `broker_leases` (created here until a migration owns it). */
interface BrokerLeasesTable {
  sink: string;
  /** Node holding the lease (NODE_ID). */
  owner: string;
  /** Lease end (epoch ms); another node may take over after it. */
  lease_until: number;
}

type LeaseDb = Kysely<Database & { broker_leases: BrokerLeasesTable }>;

const ensured = new WeakMap<Db, Promise<void>>();

/** Creates `broker_leases` when missing (once per store; SQLite and PostgreSQL alike). */
function ensureLeaseTable(db: Db): Promise<void> {
  let done = ensured.get(db);
  if (!done) {
    const create = () =>
      sql`create table if not exists broker_leases (
        sink text primary key,
        owner text not null,
        lease_until bigint not null
      )`.execute(db);
    // Two nodes creating it at once can collide on PostgreSQL's catalogue; the second try then finds it.
    done = create()
      .catch(() => create())
      .then(() => undefined);
    done.catch(() => ensured.delete(db));
    ensured.set(db, done);
  }
  return done;
}

export class CursorStore {
  private readonly db: LeaseDb;

  constructor(
    private readonly base: Db,
    /** Cursor name: `rabbitmq`, `nats`. */
    readonly sink: string,
    /** This node's name (lease owner). */
    private readonly owner: string,
    private readonly leaseMs: number,
  ) {
    this.db = base.withTables<{ broker_leases: BrokerLeasesTable }>();
  }

  /** Creates this cursor when missing (a new one starts at `startSeq`) and the lease table. */
  async init(startSeq: number): Promise<void> {
    await ensureLeaseTable(this.base);
    await this.db
      .insertInto('broker_cursors')
      .values({ sink: this.sink, last_seq: startSeq, updated_at: Date.now() })
      .onConflict((oc) => oc.column('sink').doNothing())
      .execute();
  }

  /** Takes or renews the lease; answers the cursor position, or undefined while another node holds the lease. */
  async claim(): Promise<number | undefined> {
    const now = Date.now();
    await this.db
      .insertInto('broker_leases')
      .values({ sink: this.sink, owner: this.owner, lease_until: now + this.leaseMs })
      .onConflict((oc) => oc.column('sink').doNothing())
      .execute();
    const taken = await this.db
      .updateTable('broker_leases')
      .set({ owner: this.owner, lease_until: now + this.leaseMs })
      .where('sink', '=', this.sink)
      .where((eb) => eb.or([eb('owner', '=', this.owner), eb('lease_until', '<', now)]))
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows) !== 1) return undefined;
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
      .where(({ exists, selectFrom }) => exists(selectFrom('broker_leases').select('sink').where('sink', '=', this.sink).where('owner', '=', this.owner)))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Gives the lease up (on stop) so another node takes over at once. */
  async release(): Promise<void> {
    await this.db.deleteFrom('broker_leases').where('sink', '=', this.sink).where('owner', '=', this.owner).execute();
  }

  async position(): Promise<number | undefined> {
    const row = await this.db.selectFrom('broker_cursors').select('last_seq').where('sink', '=', this.sink).executeTakeFirst();
    return row ? Number(row.last_seq) : undefined;
  }
}
