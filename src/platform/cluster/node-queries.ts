// Store access of the node registry: registering an incarnation, its heartbeat, its stop, and who is alive.
import type { Db } from '../store/db.js';

/** One node incarnation as the store keeps it. */
interface NodeRecord {
  incarnation: string;
  nodeId: string;
  /** NODE_ADDRESS as the node wrote it (null for rows from before addresses were kept). */
  address: string | null;
  startedAt: number;
  heartbeatAt: number;
  stoppedAt: number | null;
}

export async function insertNode(db: Db, incarnation: string, nodeId: string, address: string, now: number): Promise<void> {
  await db.insertInto('nodes').values({ incarnation, node_id: nodeId, address, started_at: now, heartbeat_at: now, stopped_at: null }).execute();
}

/**
 * Marks earlier incarnations stopped: on a one-node store (SQLite) every other one, else those of the same node id (a
 * node id names one running node, so its earlier lives are over). Answers how many.
 */
export async function retireEarlierLives(db: Db, incarnation: string, nodeId: string | null, now: number): Promise<number> {
  let update = db.updateTable('nodes').set({ stopped_at: now }).where('incarnation', '<>', incarnation).where('stopped_at', 'is', null);
  if (nodeId !== null) update = update.where('node_id', '=', nodeId);
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Writes the heartbeat; false when this incarnation was marked stopped (or removed) by another node meanwhile. */
export async function beat(db: Db, incarnation: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('nodes')
    .set({ heartbeat_at: now })
    .where('incarnation', '=', incarnation)
    .where('stopped_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function markStopped(db: Db, incarnation: string, now: number): Promise<void> {
  await db.updateTable('nodes').set({ stopped_at: now }).where('incarnation', '=', incarnation).execute();
}

/**
 * The incarnations alive: running (not stopped) with a heartbeat since `aliveSince`. The one place that says what alive
 * is: read as is, or narrowed to one incarnation inside `exists(...)` of another statement.
 */
export function liveNodes(db: Db, aliveSince: number) {
  return db.selectFrom('nodes').select('nodes.incarnation').where('nodes.stopped_at', 'is', null).where('nodes.heartbeat_at', '>=', aliveSince);
}

/** Incarnations running with a heartbeat newer than `since`. */
export async function liveIncarnations(db: Db, since: number): Promise<string[]> {
  const rows = await liveNodes(db, since).execute();
  return rows.map((row) => row.incarnation);
}

/** Every incarnation seen since `since` (started, beating or stopped then), newest first. */
export async function recentNodes(db: Db, since: number): Promise<NodeRecord[]> {
  const rows = await db
    .selectFrom('nodes')
    .selectAll()
    .where((eb) => eb.or([eb('heartbeat_at', '>=', since), eb('stopped_at', '>=', since)]))
    .orderBy('started_at', 'desc')
    .execute();
  return rows.map((row) => ({
    incarnation: row.incarnation,
    nodeId: row.node_id,
    address: row.address ?? null,
    startedAt: Number(row.started_at),
    heartbeatAt: Number(row.heartbeat_at),
    stoppedAt: row.stopped_at === null ? null : Number(row.stopped_at),
  }));
}

/** Forgets incarnations silent since before `before` (dead or stopped long ago). */
export async function forgetNodesBefore(db: Db, before: number): Promise<void> {
  await db.deleteFrom('nodes').where('heartbeat_at', '<', before).execute();
}

/** How many instances each incarnation owns (instance ownership, see src/instances/ownership.ts). */
export async function ownedInstanceCounts(db: Db): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('instance_owners')
    .select(['owner', (eb) => eb.fn.countAll<number | string | bigint>().as('count')])
    .where('owner', 'is not', null)
    .groupBy('owner')
    .execute();
  return new Map(rows.map((row) => [String(row.owner), Number(row.count)]));
}
