// findMessages: a page of an instance's stored messages, newest first, each with its status history.
import type { Db } from '../platform/store/types.js';
import { messageRecordColumns, recordFromRow, storedKeyOf, type MessageRecord } from '../messages/records.js';
import type { TimeRange } from './filters.js';

export interface MessageFilter {
  id?: string;
  keyId?: string;
  remoteJid?: string;
  /** Only `true` filters (own messages); false or absent: both directions, as upstream. */
  fromMe?: boolean;
  participant?: string;
  messageType?: string;
  source?: string;
  timestamp?: TimeRange;
}

/** One stored message as findMessages answers it. */
function presentStoredMessage(record: MessageRecord, statuses: string[]) {
  return {
    id: record.id,
    key: storedKeyOf(record),
    pushName: record.pushName ?? '',
    messageType: record.messageType,
    message: record.content,
    messageTimestamp: record.timestamp,
    instanceId: record.instanceId,
    source: record.source,
    contextInfo: contextInfoOf(record.content),
    MessageUpdate: statuses.map((status) => ({ status })),
  };
}

function contextInfoOf(content: Record<string, unknown>): unknown {
  for (const value of Object.values(content)) {
    if (value && typeof value === 'object' && 'contextInfo' in value) return (value as { contextInfo: unknown }).contextInfo ?? null;
  }
  return null;
}

/** A message filter on the instance's messages (kept to indexed columns first: instance, chat, then time). */
function filtered(db: Db, instanceId: string, filter: MessageFilter) {
  let query = db.selectFrom('messages').where('instance_id', '=', instanceId);
  if (filter.remoteJid !== undefined) query = query.where('remote_jid', '=', filter.remoteJid);
  if (filter.id !== undefined) query = query.where('id', '=', filter.id);
  if (filter.keyId !== undefined) query = query.where('key_id', '=', filter.keyId);
  if (filter.fromMe === true) query = query.where('from_me', '=', 1);
  if (filter.participant !== undefined) query = query.where('participant', '=', filter.participant);
  if (filter.messageType !== undefined) query = query.where('message_type', '=', filter.messageType);
  if (filter.source !== undefined) query = query.where('source', '=', filter.source);
  if (filter.timestamp?.gte !== undefined) query = query.where('message_timestamp', '>=', filter.timestamp.gte);
  if (filter.timestamp?.lte !== undefined) query = query.where('message_timestamp', '<=', filter.timestamp.lte);
  return query;
}

/**
 * The page's messages (newest first; equal times by id, newest first) and how many match. One chat's page is read
 * along the messages_chat_time index: its cost does not depend on how many messages the store holds.
 */
export async function findMessages(db: Db, instanceId: string, filter: MessageFilter, page: { size: number; skip: number }) {
  const [counted, rows] = await Promise.all([
    filtered(db, instanceId, filter)
      .select((eb) => eb.fn.countAll<number | string>().as('total'))
      .executeTakeFirst(),
    filtered(db, instanceId, filter)
      .select(messageRecordColumns)
      .orderBy('message_timestamp', 'desc')
      .orderBy('id', 'desc')
      .limit(page.size)
      .offset(page.skip)
      .execute(),
  ]);
  const records = rows.map((row) => recordFromRow({ ...row, message_timestamp: Number(row.message_timestamp) }));
  const statuses = await statusesOf(
    db,
    records.map((r) => r.id),
  );
  return {
    total: Number(counted?.total ?? 0),
    records: records.map((record) => presentStoredMessage(record, statuses.get(record.id) ?? [])),
  };
}

/** Each message's recorded statuses, in the order recorded. */
async function statusesOf(db: Db, messageIds: string[]): Promise<Map<string, string[]>> {
  const byMessage = new Map<string, string[]>();
  if (messageIds.length === 0) return byMessage;
  const rows = await db
    .selectFrom('message_status')
    .select(['message_id', 'status'])
    .where('message_id', 'in', messageIds)
    .orderBy('message_id')
    .orderBy('id')
    .execute();
  for (const row of rows) {
    const list = byMessage.get(row.message_id) ?? [];
    list.push(row.status);
    byMessage.set(row.message_id, list);
  }
  return byMessage;
}
