// The head of each chat's send queue for one instance, found by index seeks (a few per chat), not a scan of the queue.
import { sql } from 'kysely';
import type { Db } from '../platform/store/db.js';

export interface QueueHead {
  chat: string;
  /** When the chat's first pending send may be attempted (epoch ms). */
  readyAt: number;
}

/**
 * The chats with pending sends and when each one's first send is due. The chats are walked along `send_queue_chat`
 * (instance, state, chat, seq): each next chat is one seek past the one before, and each head one seek into its chat.
 * A `group by` over the pending rows instead read every queued send: 10 ms on SQLite's one connection and 60 ms
 * (a sort spilled to disk) on PostgreSQL with 100,000 sends queued, every time the worker looked for work.
 */
export async function queueHeads(db: Db, instanceId: string): Promise<QueueHead[]> {
  const { rows } = await sql<{ chat: string; ready_at: number | string | null }>`
    with recursive chats(chat) as (
      select min(chat_jid) from send_queue where instance_id = ${instanceId} and state = 'pending'
      union all
      select (
        select min(q.chat_jid) from send_queue q
        where q.instance_id = ${instanceId} and q.state = 'pending' and q.chat_jid > chats.chat
      ) from chats where chats.chat is not null
    )
    select chats.chat as chat, (
      select q.next_attempt_at from send_queue q
      where q.instance_id = ${instanceId} and q.state = 'pending' and q.chat_jid = chats.chat
      order by q.seq limit 1
    ) as ready_at
    from chats where chats.chat is not null`.execute(db);
  // A head sent and removed between the two seeks has no time: its chat is looked at now (an empty lane ends at once).
  return rows.map((row) => ({ chat: row.chat, readyAt: row.ready_at === null ? 0 : Number(row.ready_at) }));
}

/**
 * The instances with pending sends, found by index seeks along `send_queue_chat` (one per instance with a queue), not
 * a scan of the queue: the send workers' one safety poll for every instance of a node.
 */
export async function instancesWithPendingSends(db: Db): Promise<string[]> {
  const { rows } = await sql<{ instance_id: string }>`
    with recursive queued(instance_id) as (
      select min(instance_id) from send_queue where state = 'pending'
      union all
      select (
        select min(q.instance_id) from send_queue q
        where q.instance_id > queued.instance_id and q.state = 'pending'
      ) from queued where queued.instance_id is not null
    )
    select instance_id from queued where instance_id is not null`.execute(db);
  return rows.map((row) => row.instance_id);
}

/** Which of these instances have pending sends (one seek each). */
export async function pendingAmong(db: Db, instanceIds: readonly string[]): Promise<Set<string>> {
  const rows = await db
    .selectFrom('instances')
    .select('id')
    .where('id', 'in', [...instanceIds])
    .where((eb) =>
      eb.exists(
        eb.selectFrom('send_queue').select('send_queue.seq').whereRef('send_queue.instance_id', '=', 'instances.id').where('send_queue.state', '=', 'pending'),
      ),
    )
    .execute();
  return new Set(rows.map((row) => row.id));
}
