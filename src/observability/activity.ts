// Activity figures of instances: sends waiting in the queue and webhook deliveries pending, failing and dead-lettered.
import { sql } from 'kysely';
import type { Db } from '../platform/store/db.js';

/** The instance webhook's deliveries of one instance by state: `failing` are pending ones already tried at least once. */
export interface DeliveryCounts {
  pending: number;
  failing: number;
  dead: number;
}

export interface ActivityFigures {
  queuedSends: Map<string, number>;
  deliveries: Map<string, DeliveryCounts>;
  /** Age in seconds of the oldest delivery still waiting (any target, 0 when none): how far the outbox lags. */
  outboxLagSeconds: number;
}

/** The figures of the given instances (by id), read in three grouped counts. */
export async function activityFigures(db: Db, instanceIds: readonly string[], now = Date.now()): Promise<ActivityFigures> {
  const figures: ActivityFigures = { queuedSends: new Map(), deliveries: new Map(), outboxLagSeconds: 0 };
  if (instanceIds.length === 0) return figures;
  const ids = [...instanceIds];
  const queued = await db
    .selectFrom('send_queue')
    .select(['instance_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('state', '=', 'pending')
    .where('instance_id', 'in', ids)
    .groupBy('instance_id')
    .execute();
  for (const row of queued) figures.queuedSends.set(row.instance_id, Number(row.n));
  const deliveries = await db
    .selectFrom('deliveries')
    .select([
      'instance_id',
      sql<number>`sum(case when state = 'pending' then 1 else 0 end)`.as('pending'),
      sql<number>`sum(case when state = 'pending' and attempts > 0 then 1 else 0 end)`.as('failing'),
      sql<number>`sum(case when state = 'dead' then 1 else 0 end)`.as('dead'),
    ])
    .where('target', '=', 'instance')
    .where('state', 'in', ['pending', 'dead'])
    .where('instance_id', 'in', ids)
    .groupBy('instance_id')
    .execute();
  for (const row of deliveries) {
    if (row.instance_id) figures.deliveries.set(row.instance_id, { pending: Number(row.pending), failing: Number(row.failing), dead: Number(row.dead) });
  }
  const oldest = await db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.min<number>('created_at').as('at'))
    .where('state', '=', 'pending')
    .where('instance_id', 'in', ids)
    .executeTakeFirst();
  const at = oldest?.at === null || oldest?.at === undefined ? null : Number(oldest.at);
  figures.outboxLagSeconds = at === null ? 0 : Math.max(0, Math.round((now - at) / 100) / 10);
  return figures;
}
