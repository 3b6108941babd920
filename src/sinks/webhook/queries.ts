// Store access of the webhook dispatcher: lane heads, claiming a delivery with a lease, recording the outcome.
import { sql, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../../platform/store/db.js';
import { isPostgres } from '../../platform/store/is-postgres.js';
import type { DeliveriesTable } from '../../platform/store/schema.js';
import type { DeliveryLane, DeliveryTarget } from './lanes.js';
import { webhookOptions, type WebhookOptions } from './options.js';

export type DeliveryState = 'pending' | 'delivered' | 'dead' | 'cancelled';

export type DeliveryRow = Selectable<DeliveriesTable>;

/** A lane: deliveries to one destination kind of one instance, delivered strictly in id order. */
export type Lane = DeliveryLane;

export function laneKey(lane: Lane): string {
  return JSON.stringify([lane.target, lane.instanceId]);
}

export function parseLaneKey(key: string): Lane {
  const [target, instanceId] = JSON.parse(key) as [DeliveryTarget, string | null];
  return { target, instanceId };
}

/** The first pending delivery of every lane, with the time it may be attempted. */
export async function laneHeads(db: Db): Promise<{ lane: Lane; readyAt: number }[]> {
  const heads = db
    .selectFrom('deliveries')
    .select(['target', 'instance_id', (eb) => eb.fn.min('id').as('head_id')])
    .where(isPending('state'))
    .groupBy(['target', 'instance_id'])
    .as('h');
  const rows = await db
    .selectFrom('deliveries as d')
    .innerJoin(heads, 'h.head_id', 'd.id')
    .select(['d.target', 'd.instance_id', 'd.next_attempt_at'])
    .orderBy('d.next_attempt_at')
    .execute();
  return rows.map((r) => ({
    lane: { target: r.target as DeliveryTarget, instanceId: r.instance_id },
    readyAt: Number(r.next_attempt_at),
  }));
}

/** A pending delivery with the body of its event (null when the event left the outbox). */
export type DeliveryWithBody = DeliveryRow & { body: string | null };

/**
 * The first `limit` pending deliveries of a lane, in order, each with its event body (one query); with `afterId`,
 * those after that delivery (the lane's next batch while the one before it is still being sent).
 */
async function laneBatch(db: Db, lane: Lane, limit: number, afterId?: number): Promise<DeliveryWithBody[]> {
  let query = db
    .selectFrom('deliveries as d')
    .leftJoin('outbox as o', 'o.id', 'd.event_id')
    .selectAll('d')
    .select('o.body as body')
    .where(isPending('d.state'))
    .where('d.target', '=', lane.target)
    .where((eb) => (lane.instanceId === null ? eb('d.instance_id', 'is', null) : eb('d.instance_id', '=', lane.instanceId)));
  if (afterId !== undefined) query = query.where('d.id', '>', afterId);
  return query.orderBy('d.id').limit(limit).execute();
}

/**
 * Takes the ready ones of `rows` for this node until `leaseUntil` (a value no other claim uses) by moving their next
 * attempt past the request: other nodes (and later scans) then see them as not ready; if this node dies, the lease
 * runs out and they are attempted again (at least once, never lost). Answers the ids this node now holds.
 */
async function claimMany(db: Db, rows: DeliveryRow[], now: number, claim: Claim): Promise<Set<number>> {
  const held = await db
    .updateTable('deliveries')
    .set({ next_attempt_at: claim.leaseUntil, claimed_by: claim.claimant })
    .where(
      'id',
      'in',
      rows.map((r) => r.id),
    )
    .where(unindexed('state'), '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .returning('id')
    .execute();
  return new Set(held.map((r) => Number(r.id)));
}

/** A claim: until when it holds, and the node incarnation holding it (its claims are taken over once it is dead). */
export interface Claim {
  leaseUntil: number;
  claimant: string;
}

/** A lane's batch as read and claimed in one go. `held`: the ids this node now holds. */
export interface ClaimedRows {
  /** The batch in lane order: held deliveries as claimed (with their bodies), the others as they stood. */
  rows: DeliveryWithBody[];
  held: Set<number>;
}

/**
 * Reads the lane's next `limit` pending deliveries (after `afterId`) and claims the ready ones at its head (see
 * `claimMany`). On PostgreSQL one statement does both; on SQLite (no UPDATE in a WITH clause) a read, then the claim.
 */
export async function readAndClaim(db: Db, lane: Lane, limit: number, afterId: number | undefined, now: number, claim: Claim): Promise<ClaimedRows> {
  if (!isPostgres(db)) {
    const rows = await laneBatch(db, lane, limit, afterId);
    const ready = readyHead(rows, now);
    return { rows, held: ready.length > 0 ? await claimMany(db, ready, now, claim) : new Set() };
  }
  const ofLane = lane.instanceId === null ? sql`"instance_id" is null` : sql`"instance_id" = ${lane.instanceId}`;
  // batch: the lane's next rows; ready: its head up to the first that must wait; claimed: those of them still
  // pending and due when the UPDATE gets to them (another node may have just taken one). The answer: the claimed rows
  // with their event bodies, and the batch's other rows as they stood. Rows are named by arrays of ids, so each is
  // looked up by its key (a join with a CTE, whose size the planner cannot know, may scan the whole table instead).
  const result = await sql<DeliveryWithBody & { held: boolean }>`
    with batch as (
      select "id", "next_attempt_at" from "deliveries"
      where "state" = 'pending' and "target" = ${lane.target} and ${ofLane} and "id" > ${afterId ?? 0}
      order by "id" limit ${limit}
    ), ready as (
      select "id" from batch
      where "next_attempt_at" <= ${now}
        and "id" < coalesce((select min("id") from batch where "next_attempt_at" > ${now}), 9223372036854775807)
    ), claimed as (
      update "deliveries" set "next_attempt_at" = ${claim.leaseUntil}, "claimed_by" = ${claim.claimant}
      where "id" = any(array(select "id" from ready)) and "state" = 'pending' and "next_attempt_at" <= ${now}
      returning *
    )
    select c.*, o."body", true as "held" from claimed c left join "outbox" o on o."id" = c."event_id"
    union all
    select d.*, null, false from "deliveries" d
    where d."id" = any(array(select "id" from batch)) and d."id" <> all(array(select "id" from claimed))
    order by "id"`.execute(db);
  const held = new Set<number>();
  const rows: DeliveryWithBody[] = [];
  for (const { held: mine, ...row } of result.rows) {
    if (mine) held.add(Number(row.id));
    rows.push(row);
  }
  return { rows, held };
}

/** The deliveries at the head of a batch that are due, up to the first that must wait. */
export function readyHead<R extends DeliveryRow>(rows: R[], now: number, held?: Set<number>): R[] {
  const ready: R[] = [];
  for (const row of rows) {
    // A held row shows its new lease; it was due when claimed.
    if (!held?.has(Number(row.id)) && Number(row.next_attempt_at) > now) break;
    ready.push(row);
  }
  return ready;
}

/**
 * `state = 'pending'` written out, not as a parameter: SQLite uses the partial index of pending deliveries only for
 * a condition it can see implies the index's own (PostgreSQL plans each statement for its values anyway).
 */
export function isPending(column: 'state' | 'd.state') {
  return sql<boolean>`${sql.ref(column)} = 'pending'`;
}

/**
 * A column compared as an expression, so no index on it is used: the statements below name their rows by id, but
 * SQLite's planner would otherwise walk the (large) pending part of `deliveries_pending` for `state = ?`.
 */
function unindexed(column: 'state') {
  return sql<string>`${sql.ref(column)} || ''`;
}

/** Records several outcomes in one transaction (each only if its claim still holds) and releases the rest. */
export async function settleMany(
  db: Db,
  leaseUntil: number,
  outcomes: { id: number; patch: Updateable<DeliveriesTable> }[],
  release: number[],
  now: number,
): Promise<Set<number>> {
  // Outcomes alike (first-time deliveries answered alike) are recorded by one statement.
  const groups = new Map<string, { patch: Updateable<DeliveriesTable>; ids: number[] }>();
  for (const { id, patch } of outcomes) {
    const key = JSON.stringify(patch);
    const group = groups.get(key) ?? { patch, ids: [] };
    group.ids.push(id);
    groups.set(key, group);
  }
  const write = async (tx: Db): Promise<Set<number>> => {
    const recorded = new Set<number>();
    for (const { patch, ids } of groups.values()) {
      const rows = await tx
        .updateTable('deliveries')
        .set({ ...patch, claimed_by: null })
        .where('id', 'in', ids)
        .where(unindexed('state'), '=', 'pending')
        .where('next_attempt_at', '=', leaseUntil)
        .returning('id')
        .execute();
      for (const row of rows) recorded.add(Number(row.id));
    }
    if (release.length > 0) {
      await tx
        .updateTable('deliveries')
        .set({ next_attempt_at: now, claimed_by: null })
        .where('id', 'in', release)
        .where(unindexed('state'), '=', 'pending')
        .where('next_attempt_at', '=', leaseUntil)
        .execute();
    }
    return recorded;
  };
  // One statement (the usual batch: all delivered alike) is atomic by itself: no BEGIN/COMMIT round trips.
  if (groups.size + (release.length > 0 ? 1 : 0) <= 1) return write(db);
  return db.transaction().execute((tx) => write(tx));
}

/**
 * Makes the claims of node incarnations not in `live` (dead, or stopped) due now, so the next scan takes their
 * deliveries over at once instead of waiting for their leases; answers how many. The holders are gone, so no answer of
 * theirs is recorded any more (their settle checks the lease): each delivery is attempted again, at least once.
 */
export async function takeOverClaims(db: Db, live: readonly string[], now: number): Promise<number> {
  let update = db
    .updateTable('deliveries')
    .set({ next_attempt_at: now, claimed_by: null })
    .where('claimed_by', 'is not', null)
    .where(unindexed('state'), '=', 'pending');
  if (live.length > 0) update = update.where('claimed_by', 'not in', [...live]);
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Gives back every claim of `claimant` (a clean stop): due now, for the other nodes or the next start. */
export async function releaseClaimsOf(db: Db, claimant: string, now: number): Promise<number> {
  const result = await db
    .updateTable('deliveries')
    .set({ next_attempt_at: now, claimed_by: null })
    .where('claimed_by', '=', claimant)
    .where(unindexed('state'), '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * The instance's webhook settings straight from the store (used when the in-memory cache has none,
 * e.g. settings written by another node); undefined when the instance has no webhook row at all.
 */
export async function storedWebhook(db: Db, instanceId: string): Promise<{ enabled: boolean; options: WebhookOptions } | undefined> {
  const row = await db
    .selectFrom('event_sinks')
    .select(['enabled', 'options', 'updated_at'])
    .where('instance_id', '=', instanceId)
    .where('sink', '=', 'webhook')
    .executeTakeFirst();
  if (!row) return undefined;
  const options = JSON.parse(row.options) as Record<string, unknown>;
  return { enabled: row.enabled === 1, options: webhookOptions({ enabled: row.enabled === 1, events: [], options, updatedAt: row.updated_at }) };
}
