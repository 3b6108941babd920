// findChats and findChatByRemoteJid: the instance's chats, most recent first, with their contact and last message.
import type { Selectable } from 'kysely';
import type { Db } from '../platform/store/types.js';
import type { ChatsTable } from '../platform/store/schema.js';
import { messageRecordColumns, recordFromRow, storedKeyOf } from '../messages/records.js';
import { isoDate, type TimeRange } from './filters.js';

export interface ChatFilter {
  remoteJid?: string;
  /** On the chat's last message time. */
  lastMessage?: TimeRange;
}

/** Cloud API's customer service window, as upstream reports it from the chat's creation. */
const windowMs = 24 * 3600_000;

/** The chats of a page (newest last message first; chats without one last), each with its contact and last message. */
export async function findChats(db: Db, instanceId: string, filter: ChatFilter, page: { take?: number; skip: number }) {
  let query = db
    .selectFrom('chats')
    .leftJoin('contacts', (join) => join.onRef('contacts.instance_id', '=', 'chats.instance_id').onRef('contacts.remote_jid', '=', 'chats.remote_jid'))
    .selectAll('chats')
    .select(['contacts.id as contact_id', 'contacts.push_name as contact_name', 'contacts.profile_pic_url as contact_picture'])
    .where('chats.instance_id', '=', instanceId);
  if (filter.remoteJid !== undefined) query = query.where('chats.remote_jid', '=', filter.remoteJid);
  if (filter.lastMessage?.gte !== undefined) query = query.where('chats.last_message_at', '>=', filter.lastMessage.gte);
  if (filter.lastMessage?.lte !== undefined) query = query.where('chats.last_message_at', '<=', filter.lastMessage.lte);
  query = query
    .orderBy((eb) => eb.case().when('chats.last_message_at', 'is', null).then(1).else(0).end())
    .orderBy('chats.last_message_at', 'desc')
    .orderBy('chats.id', 'desc');
  if (page.take !== undefined) query = query.limit(page.take);
  if (page.skip > 0) query = page.take === undefined ? query.limit(Number.MAX_SAFE_INTEGER).offset(page.skip) : query.offset(page.skip);
  const rows = await query.execute();
  const now = Date.now();
  return Promise.all(
    rows.map(async (row) => {
      const last = await lastMessageOf(db, instanceId, row.remote_jid);
      const createdAt = Number(row.created_at);
      const lastAt = row.last_message_at === null ? null : Number(row.last_message_at);
      return {
        id: row.id,
        remoteJid: row.remote_jid,
        pushName: row.name ?? row.contact_name ?? null,
        profilePicUrl: row.contact_picture ?? null,
        updatedAt: isoDate(lastAt !== null ? lastAt * 1000 : Number(row.updated_at)),
        windowStart: isoDate(createdAt),
        windowExpires: isoDate(createdAt + windowMs),
        windowActive: createdAt + windowMs > now,
        lastMessage: last,
        unreadCount: Number(row.unread_messages),
        isSaved: row.contact_id !== null,
        archived: row.archived === 1,
        markedUnread: row.marked_unread === 1,
      };
    }),
  );
}

/** The chat's newest stored message (one index seek), as findChats shows it. */
async function lastMessageOf(db: Db, instanceId: string, remoteJid: string) {
  const row = await db
    .selectFrom('messages')
    .select(messageRecordColumns)
    .where('instance_id', '=', instanceId)
    .where('remote_jid', '=', remoteJid)
    .orderBy('message_timestamp', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return null;
  const record = recordFromRow({ ...row, message_timestamp: Number(row.message_timestamp) });
  return {
    id: record.id,
    key: storedKeyOf(record),
    pushName: record.pushName ?? '',
    participant: record.participant,
    messageType: record.messageType,
    message: record.content,
    source: record.source,
    messageTimestamp: record.timestamp,
    instanceId: record.instanceId,
    status: record.status,
  };
}

/** A chat row as findChatByRemoteJid answers it. */
function presentChat(row: Selectable<ChatsTable>) {
  return {
    id: row.id,
    remoteJid: row.remote_jid,
    name: row.name,
    labels: JSON.parse(row.labels) as unknown,
    createdAt: isoDate(Number(row.created_at)),
    updatedAt: isoDate(Number(row.updated_at)),
    instanceId: row.instance_id,
    unreadMessages: Number(row.unread_messages),
    archived: row.archived === 1,
    markedUnread: row.marked_unread === 1,
  };
}

export async function findChat(db: Db, instanceId: string, remoteJid: string) {
  const row = await db.selectFrom('chats').selectAll().where('instance_id', '=', instanceId).where('remote_jid', '=', remoteJid).executeTakeFirst();
  return row ? presentChat(row) : null;
}
