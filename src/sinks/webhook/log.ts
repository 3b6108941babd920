// The delivery log of an instance (newest first, cursor paged) and redelivery of its deliveries.
import { redactUrl } from './urls.js';
import type { Db } from '../../platform/store/db.js';
import type { DeliveryTarget } from './lanes.js';
import type { DeliveryRow, DeliveryState } from './queries.js';

interface DeliveryView {
  id: number;
  eventId: string;
  /** Catalogue name, e.g. `MESSAGES_UPSERT`. */
  event: string;
  target: DeliveryTarget;
  url: string;
  status: DeliveryState;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  /** Only for pending deliveries. */
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

export interface DeliveryPage {
  deliveries: DeliveryView[];
  /** Pass back as `cursor` for the next (older) page; null on the last page. */
  nextCursor: string | null;
}

export interface ListOptions {
  status?: DeliveryState;
  /** 1–200, default 50 (out-of-range values are clamped). */
  limit?: number;
  cursor?: string;
}

/** A cursor that was not produced by `listDeliveries` (answer 400). */
export class InvalidCursorError extends Error {
  constructor() {
    super('cursor is not valid');
    this.name = 'InvalidCursorError';
  }
}

/**
 * Whose deliveries a request may see and replay: an instance's own (by id: a later instance of the same name does
 * not inherit them), and the operator's global webhook's only with the global key (its URL is the operator's).
 */
export interface DeliveryScope {
  instanceId: string;
  withGlobal: boolean;
}

export async function listDeliveries(db: Db, scope: DeliveryScope, options: ListOptions = {}): Promise<DeliveryPage> {
  const requested = options.limit ?? 50;
  const limit = Number.isFinite(requested) ? Math.min(200, Math.max(1, Math.trunc(requested))) : 50;
  const before = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
  let query = db.selectFrom('deliveries').selectAll().where('instance_id', '=', scope.instanceId);
  if (!scope.withGlobal) query = query.where('target', '=', 'instance');
  if (options.status) query = query.where('state', '=', options.status);
  if (before !== undefined) query = query.where('id', '<', before);
  const rows = await query
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    deliveries: page.map(view),
    nextCursor: rows.length > limit && last ? encodeCursor(Number(last.id)) : null,
  };
}

export type RedeliverRequest = { deliveryId: number } | { status: 'dead' };

/**
 * Queues deliveries of this instance again: attempts reset, due now, same event id (so receivers can
 * deduplicate). `{deliveryId}` replays that one delivery whatever its state (0 when it is not this
 * instance's: answer 404); `{status: 'dead'}` replays every dead-lettered one. Call the dispatcher's
 * `wake()` afterwards to send them at once.
 */
export async function redeliver(db: Db, scope: DeliveryScope, request: RedeliverRequest): Promise<{ requeued: number }> {
  let update = db
    .updateTable('deliveries')
    .set({ state: 'pending', attempts: 0, next_attempt_at: Date.now(), last_error: null, last_status: null, delivered_at: null, claimed_by: null })
    .where('instance_id', '=', scope.instanceId);
  if (!scope.withGlobal) update = update.where('target', '=', 'instance');
  if ('deliveryId' in request) {
    if (!Number.isSafeInteger(request.deliveryId) || request.deliveryId < 1) return { requeued: 0 };
    update = update.where('id', '=', request.deliveryId);
  } else {
    update = update.where('state', '=', 'dead');
  }
  const result = await update.executeTakeFirst();
  return { requeued: Number(result.numUpdatedRows) };
}

function view(row: DeliveryRow): DeliveryView {
  const status = row.state as DeliveryState;
  return {
    id: Number(row.id),
    eventId: row.event_id,
    event: row.event,
    target: row.target as DeliveryTarget,
    url: redactUrl(row.url),
    status,
    attempts: row.attempts,
    lastStatus: row.last_status,
    lastError: row.last_error,
    nextAttemptAt: status === 'pending' ? iso(row.next_attempt_at) : null,
    createdAt: iso(row.created_at),
    deliveredAt: row.delivered_at === null ? null : iso(row.delivered_at),
  };
}

function iso(ms: number): string {
  return new Date(Number(ms)).toISOString();
}

function encodeCursor(id: number): string {
  return Buffer.from(`d${id}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): number {
  const match = /^d([1-9]\d{0,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const id = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(id)) throw new InvalidCursorError();
  return id;
}
