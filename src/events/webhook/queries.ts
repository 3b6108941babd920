// Store access of the webhook dispatcher: lane heads, claiming a delivery with a lease, recording the outcome.
import type { Selectable, Updateable } from 'kysely';
import type { Db } from '../../store/db.js';
import type { DeliveriesTable } from '../../store/schema.js';
import type { DeliveryTarget, EventEnvelope } from '../writer.js';
import { webhookOptions, type WebhookOptions } from '../sink-configs.js';

export type DeliveryState = 'pending' | 'delivered' | 'dead' | 'cancelled';
export const deliveryStates: readonly DeliveryState[] = ['pending', 'delivered', 'dead', 'cancelled'];

export type DeliveryRow = Selectable<DeliveriesTable>;

/** A lane: deliveries to one destination kind of one instance, delivered strictly in id order. */
export interface Lane {
  target: DeliveryTarget;
  instanceId: string | null;
}

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
    .where('state', '=', 'pending')
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

export async function laneHead(db: Db, lane: Lane): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('state', '=', 'pending')
    .where('target', '=', lane.target)
    .where((eb) => (lane.instanceId === null ? eb('instance_id', 'is', null) : eb('instance_id', '=', lane.instanceId)))
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Takes the delivery for this node until `leaseUntil` by moving its next attempt past the request.
 * Other nodes (and later scans) then see the lane's head as not ready; if this node dies, the lease
 * runs out and the delivery is attempted again (at least once, never lost).
 */
export async function claim(db: Db, row: DeliveryRow, leaseUntil: number): Promise<boolean> {
  const result = await db
    .updateTable('deliveries')
    .set({ next_attempt_at: leaseUntil })
    .where('id', '=', row.id)
    .where('state', '=', 'pending')
    .where('next_attempt_at', '=', row.next_attempt_at)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records what happened, unless the claim was lost meanwhile (lease expired, or redelivery reset the row). */
export async function settle(db: Db, id: number, leaseUntil: number, patch: Updateable<DeliveriesTable>): Promise<boolean> {
  const result = await db
    .updateTable('deliveries')
    .set(patch)
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .where('next_attempt_at', '=', leaseUntil)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function loadEnvelope(db: Db, eventId: string): Promise<EventEnvelope | undefined> {
  const row = await db.selectFrom('outbox').select('body').where('id', '=', eventId).executeTakeFirst();
  return row ? (JSON.parse(row.body) as EventEnvelope) : undefined;
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
