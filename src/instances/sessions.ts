// The stored sessions of instances (one JSON document each) and their many small keys (Signal keys), as connectors keep them.
import type { SessionKeyStore } from '../core/connector.js';
import type { Instance } from '../core/instance.js';
import type { Db } from '../platform/store/db.js';
import type { Unit } from '../platform/store/unit.js';
import { KeyedSerialQueue } from '../platform/util/keyed-serial-queue.js';
import { keyedTurnBatch } from '../platform/util/turn-batch.js';
import type { OwnershipFence } from '../platform/cluster/ownership-fence.js';

export class SessionStore {
  /** Session key writes of each instance, applied in the order asked. */
  private readonly keyWrites = new KeyedSerialQueue();
  /** Sessions asked for in one turn (many instances opening at once) are read with one query. */
  private readonly reads = keyedTurnBatch<string | null>(async (ids) => {
    const rows = await this.db.selectFrom('sessions').select(['instance_id', 'data']).where('instance_id', 'in', ids).execute();
    return new Map(rows.map((row) => [row.instance_id, row.data]));
  }, null);

  /** `fence`: every write passes it, so a node that lost an instance cannot change its credentials. */
  constructor(
    private readonly db: Db,
    private readonly fence?: OwnershipFence,
  ) {}

  async load(instanceId: string): Promise<Record<string, unknown> | null> {
    const data = await this.reads.call(instanceId);
    return data === null ? null : (JSON.parse(data) as Record<string, unknown>);
  }

  async save(instanceId: string, data: Record<string, unknown> | null): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await this.fence?.check(tx, instanceId);
      if (data === null) {
        await tx.deleteFrom('sessions').where('instance_id', '=', instanceId).execute();
        return;
      }
      const row = { instance_id: instanceId, data: JSON.stringify(data), updated_at: Date.now() };
      await tx
        .insertInto('sessions')
        .values(row)
        .onConflict((oc) => oc.column('instance_id').doUpdateSet({ data: row.data, updated_at: row.updated_at }))
        .execute();
    });
  }

  /** Runs `work` after every key write of the instance asked for before it (and before those asked for after). */
  afterKeyWrites<T>(instanceId: string, work: () => Promise<T>): Promise<T> {
    return this.keyWrites.run(instanceId, work);
  }

  readonly keys: SessionKeyStore = {
    get: async (instanceId, type, ids) => {
      if (ids.length === 0) return {};
      const rows = await this.db
        .selectFrom('session_keys')
        .select(['id', 'value'])
        .where('instance_id', '=', instanceId)
        .where('type', '=', type)
        .where('id', 'in', ids)
        .execute();
      return Object.fromEntries(rows.map((r) => [r.id, r.value]));
    },
    set: async (instanceId, entries) => {
      if (entries.length === 0) return;
      const now = Date.now();
      await this.keyWrites.run(instanceId, () =>
        this.db.transaction().execute(async (tx) => {
          await this.fence?.check(tx, instanceId);
          for (const entry of entries) {
            if (entry.value === null) {
              await tx.deleteFrom('session_keys').where('instance_id', '=', instanceId).where('type', '=', entry.type).where('id', '=', entry.id).execute();
            } else {
              const value = entry.value;
              await tx
                .insertInto('session_keys')
                .values({ instance_id: instanceId, type: entry.type, id: entry.id, value, updated_at: now })
                .onConflict((oc) => oc.columns(['instance_id', 'type', 'id']).doUpdateSet({ value, updated_at: now }))
                .execute();
            }
          }
        }),
      );
    },
    clear: async (instanceId) => {
      // After the writes asked for before it: a write still in flight must not bring keys back after a logout.
      await this.keyWrites.run(instanceId, () =>
        this.db.transaction().execute(async (tx) => {
          await this.fence?.check(tx, instanceId);
          await tx.deleteFrom('session_keys').where('instance_id', '=', instanceId).execute();
        }),
      );
    },
  };
}

/** The session and session keys of a deleted instance (a removal hook). */
export async function removeSessionsOf(unit: Unit, instance: Instance): Promise<void> {
  await unit.tx.deleteFrom('sessions').where('instance_id', '=', instance.id).execute();
  await unit.tx.deleteFrom('session_keys').where('instance_id', '=', instance.id).execute();
}

/** Session-key rows written per statement when a whole session is stored at once. */
const keyRowsPerInsert = 200;

/**
 * Stores a whole session inside a unit, for an instance that has none yet (one being created, such as an import; a
 * replaced instance's session went with its removal hooks): its record and every key, in the shapes `SessionStore`
 * reads back.
 */
export async function storeNewSession(
  unit: Unit,
  instanceId: string,
  data: Record<string, unknown>,
  keys: readonly { type: string; id: string; value: string }[],
): Promise<void> {
  const now = Date.now();
  await unit.tx
    .insertInto('sessions')
    .values({ instance_id: instanceId, data: JSON.stringify(data), updated_at: now })
    .execute();
  for (let i = 0; i < keys.length; i += keyRowsPerInsert) {
    const rows = keys.slice(i, i + keyRowsPerInsert).map((key) => ({ instance_id: instanceId, type: key.type, id: key.id, value: key.value, updated_at: now }));
    await unit.tx.insertInto('session_keys').values(rows).execute();
  }
}
