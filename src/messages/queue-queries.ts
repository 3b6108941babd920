// Store access of the send worker: reading a chat's queued sends, counting attempts, scheduling retries, removing sends.
import type { Selectable } from 'kysely';
import type { Db } from '../platform/store/db.js';
import type { SendQueueTable } from '../platform/store/schema.js';
import type { WriteUnit } from '../platform/store/write-unit.js';

export type QueueRow = Selectable<SendQueueTable>;

/** The chat's next `limit` pending sends in order, each with its stored message's columns prefixed `m_` (one read). */
export async function pendingSendsOfChat(db: Db, instanceId: string, chat: string, limit: number) {
  return db
    .selectFrom('send_queue as q')
    .leftJoin('messages as m', 'm.id', 'q.message_id')
    .selectAll('q')
    .select([
      'm.id as m_id',
      'm.key_id as m_key_id',
      'm.remote_jid as m_remote_jid',
      'm.remote_jid_alt as m_remote_jid_alt',
      'm.from_me as m_from_me',
      'm.participant as m_participant',
      'm.push_name as m_push_name',
      'm.message_type as m_message_type',
      'm.content as m_content',
      'm.status as m_status',
      'm.message_timestamp as m_message_timestamp',
      'm.source as m_source',
    ])
    .where('q.instance_id', '=', instanceId)
    .where('q.chat_jid', '=', chat)
    .where('q.state', '=', 'pending')
    .orderBy('q.seq')
    .limit(limit)
    .execute();
}

export type PendingSendWithMessage = Awaited<ReturnType<typeof pendingSendsOfChat>>[number];

/** Pending sends whose expiry has passed, oldest first. */
export async function expiredSends(db: Db, now: number, limit: number): Promise<QueueRow[]> {
  return (
    db
      .selectFrom('send_queue')
      .selectAll()
      .where('state', '=', 'pending')
      .where('expires_at', '<=', now)
      // The order of send_queue_expiry, so the sweep reads only what expired.
      .orderBy('expires_at')
      .orderBy('seq')
      .limit(limit)
      .execute()
  );
}

/** Counts the first attempt of these sends (queued in the unit). */
export function countFirstAttempts(unit: WriteUnit, seqs: number[]): void {
  unit.write(unit.db.updateTable('send_queue').set({ attempts: 1 }).where('seq', 'in', seqs));
}

/** Sets a send's attempt count (queued in the unit). */
export function countAttempt(unit: WriteUnit, seq: number, attempts: number): void {
  unit.write(unit.db.updateTable('send_queue').set({ attempts }).where('seq', '=', seq));
}

/** Names the sender of a stored message (queued in the unit). */
export function setSender(unit: WriteUnit, messageId: string, participant: string | null, pushName: string | null): void {
  unit.write(unit.db.updateTable('messages').set({ participant, push_name: pushName }).where('id', '=', messageId));
}

/** Takes sent sends off the queue (queued in the unit). */
export function removeSent(unit: WriteUnit, seqs: number[]): void {
  unit.write(unit.db.deleteFrom('send_queue').where('seq', 'in', seqs));
}

/** Drops the media kept for sends that left (queued in the unit). */
export function dropMediaBlobs(unit: WriteUnit, ids: string[]): void {
  unit.write(unit.db.deleteFrom('media_blobs').where('id', 'in', ids));
}

/** Puts off a send's next attempt, keeping why the last one failed. */
export async function scheduleRetry(db: Db, seq: number, at: number, lastError: string): Promise<void> {
  await db.updateTable('send_queue').set({ next_attempt_at: at, last_error: lastError }).where('seq', '=', seq).execute();
}

/** Takes one send off the queue (`db` may be a transaction). */
export async function removeQueued(db: Db, seq: number): Promise<void> {
  await db.deleteFrom('send_queue').where('seq', '=', seq).execute();
}

/** Drops the media kept for one send (`db` may be a transaction). */
export async function dropMediaBlob(db: Db, id: string): Promise<void> {
  await db.deleteFrom('media_blobs').where('id', '=', id).execute();
}

/** Whether the instance has sent a message to `chat` before (one that left: not pending, not failed). */
export async function hasSentTo(db: Db, instanceId: string, chat: string): Promise<boolean> {
  const row = await db
    .selectFrom('messages')
    .select('id')
    .where('instance_id', '=', instanceId)
    .where('remote_jid', '=', chat)
    .where('from_me', '=', 1)
    .where('status', 'not in', ['PENDING', 'ERROR'])
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether the send is still queued (not taken off meanwhile: expired by the sweep, its instance deleted). */
export async function isQueued(db: Db, seq: number): Promise<boolean> {
  return (await db.selectFrom('send_queue').select('seq').where('seq', '=', seq).executeTakeFirst()) !== undefined;
}
