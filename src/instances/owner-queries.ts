// Store access of instance ownership: the owner rows, claims of free ones, handovers, releases and the fence's read.
import { sql } from 'kysely';
import { liveNodes } from '../platform/cluster/node-queries.js';
import type { Db, Dialect, Tx } from '../platform/store/types.js';
import type { Unit } from '../platform/store/unit.js';

/** An instance this node owns, with the generation that names this ownership. */
export interface OwnedRow {
  instanceId: string;
  generation: number;
}

/** Owner rows for instances that have none yet, unowned (a node claims them at its next look). */
export async function insertMissingOwners(db: Db, now: number): Promise<void> {
  await db
    .insertInto('instance_owners')
    .columns(['instance_id', 'owner', 'generation', 'since'])
    .expression((eb) =>
      eb
        .selectFrom('instances')
        .select(['instances.id', sql<null>`null`.as('owner'), sql<number>`0`.as('generation'), sql<number>`${now}`.as('since')])
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('instance_owners').select('instance_owners.instance_id').whereRef('instance_owners.instance_id', '=', 'instances.id'))),
        ),
    )
    .onConflict((oc) => oc.column('instance_id').doNothing())
    .execute();
}

/** The rows owned by `incarnation` as the store has them now. */
export async function ownedBy(db: Db, incarnation: string): Promise<OwnedRow[]> {
  const rows = await db.selectFrom('instance_owners').select(['instance_id', 'generation']).where('owner', '=', incarnation).execute();
  return rows.map((row) => ({ instanceId: row.instance_id, generation: Number(row.generation) }));
}

/** How many instances there are, and how many each owner has (null: unowned). */
export async function ownerCounts(db: Db): Promise<Map<string | null, number>> {
  const rows = await db
    .selectFrom('instance_owners')
    .select(['owner', (eb) => eb.fn.countAll<number | string | bigint>().as('count')])
    .groupBy('owner')
    .execute();
  return new Map(rows.map((row) => [row.owner, Number(row.count)]));
}

/**
 * Claims up to `limit` instances that are unowned or whose owner is not alive (stopped, or no heartbeat since
 * `aliveSince`), each with its generation raised. On PostgreSQL rows another node is claiming are skipped (SKIP LOCKED),
 * so two nodes never take the same row.
 */
export async function claimFree(db: Db, dialect: Dialect, incarnation: string, aliveSince: number, limit: number, now: number): Promise<OwnedRow[]> {
  if (limit <= 0) return [];
  let free = db
    .selectFrom('instance_owners')
    .select('instance_owners.instance_id')
    .where((eb) =>
      eb.or([
        eb('instance_owners.owner', 'is', null),
        eb.not(eb.exists(liveNodes(db, aliveSince).where('nodes.incarnation', '=', eb.ref('instance_owners.owner')))),
      ]),
    )
    .orderBy('instance_owners.instance_id')
    .limit(limit);
  if (dialect === 'postgres') free = free.forUpdate().skipLocked();
  const rows = await db
    .updateTable('instance_owners')
    .set((eb) => ({ owner: incarnation, generation: eb('generation', '+', 1), since: now }))
    .where('instance_id', 'in', free)
    .returning(['instance_id', 'generation'])
    .execute();
  return rows.map((row) => ({ instanceId: row.instance_id, generation: Number(row.generation) }));
}

/** The owner row of a new instance, owned from the start (in the creation's transaction). */
export async function insertOwned(tx: Tx, incarnation: string, instanceId: string, generation: number, now: number): Promise<void> {
  await tx.insertInto('instance_owners').values({ instance_id: instanceId, owner: incarnation, generation, since: now }).execute();
}

/**
 * Lets go of instances owned by `incarnation` under the given generations: unowned, generation raised. Answers the ids
 * let go (a row another node took meanwhile is left as it is).
 */
export async function release(db: Db, incarnation: string, rows: readonly OwnedRow[], now: number): Promise<string[]> {
  const released: string[] = [];
  for (let i = 0; i < rows.length; i += releaseChunk) {
    const chunk = rows.slice(i, i + releaseChunk);
    const done = await db
      .updateTable('instance_owners')
      .set((eb) => ({ owner: null, generation: eb('generation', '+', 1), since: now }))
      .where('owner', '=', incarnation)
      .where((eb) => eb.or(chunk.map((row) => eb.and([eb('instance_id', '=', row.instanceId), eb('generation', '=', row.generation)]))))
      .returning('instance_id')
      .execute();
    for (const row of done) released.push(row.instance_id);
  }
  return released;
}

const releaseChunk = 500;

/** Lets go of every instance `incarnation` owns (a clean stop); answers how many. */
export async function releaseAll(db: Db, incarnation: string, now: number): Promise<number> {
  const result = await db
    .updateTable('instance_owners')
    .set((eb) => ({ owner: null, generation: eb('generation', '+', 1), since: now }))
    .where('owner', '=', incarnation)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * The owner rows of these instances as the fence reads them; on PostgreSQL share-locked, so a takeover waits for the
 * write that checks them.
 */
export async function ownersForWrite(
  tx: Tx,
  dialect: Dialect,
  instanceIds: readonly string[],
): Promise<Map<string, { owner: string | null; generation: number }>> {
  // In id order: two writes locking rows of many instances take them in the same order.
  let query = tx
    .selectFrom('instance_owners')
    .select(['instance_id', 'owner', 'generation'])
    .where('instance_id', 'in', [...instanceIds])
    .orderBy('instance_id');
  if (dialect === 'postgres') query = query.forShare();
  const rows = await query.execute();
  return new Map(rows.map((row) => [row.instance_id, { owner: row.owner, generation: Number(row.generation) }]));
}

/**
 * A statement that fails (division by zero) unless `incarnation` owns the instance under `generation`, for a write
 * unit on PostgreSQL: run with the unit's other statements, it makes the whole unit fail.
 */
export function ownershipAssertion(db: Db, incarnation: string, instanceId: string, generation: number) {
  return db
    .updateTable('instance_owners')
    .set({
      since: sql<number>`since / (case when owner = ${incarnation} and generation = ${generation} then 1 else 0 end)`,
    })
    .where('instance_id', '=', instanceId);
}

/** PostgreSQL's code for a division by zero: what a failed `ownershipAssertion` raises. */
export const assertionFailedCode = '22012';

/** The owner row of a deleted instance (a removal hook). */
export async function removeOwnerOf(unit: Unit, instance: { id: string }): Promise<void> {
  await unit.tx.deleteFrom('instance_owners').where('instance_id', '=', instance.id).execute();
}
