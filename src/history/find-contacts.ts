// findContacts and findStatusMessage: the instance's contacts, and the status history of its messages.
import type { Db } from '../platform/store/types.js';
import { isoDate } from './filters.js';

/** The contacts of a page, in the order they were first met. */
export async function findContacts(db: Db, instanceId: string, remoteJid: string | undefined, page: { take?: number; skip: number }) {
  let query = db.selectFrom('contacts').selectAll().where('instance_id', '=', instanceId);
  if (remoteJid !== undefined) query = query.where('remote_jid', '=', remoteJid);
  query = query.orderBy('id');
  if (page.take !== undefined) query = query.limit(page.take).offset(page.skip);
  const rows = await query.execute();
  return rows.map((row) => {
    const isGroup = row.remote_jid.endsWith('@g.us');
    const isSaved = Boolean(row.push_name || row.profile_pic_url);
    return {
      id: row.id,
      remoteJid: row.remote_jid,
      pushName: row.push_name,
      profilePicUrl: row.profile_pic_url,
      createdAt: isoDate(Number(row.created_at)),
      updatedAt: isoDate(Number(row.updated_at)),
      instanceId: row.instance_id,
      isGroup,
      isSaved,
      type: isGroup ? 'group' : isSaved ? 'contact' : 'group_member',
    };
  });
}

/** The recorded statuses of the instance's messages (of one chat, of one message id), in the order recorded. */
export async function findStatuses(db: Db, instanceId: string, filter: { remoteJid?: string; keyId?: string }, page: { size: number; skip: number }) {
  let query = db
    .selectFrom('message_status')
    .innerJoin('messages', 'messages.id', 'message_status.message_id')
    .select([
      'message_status.id as status_id',
      'message_status.status',
      'message_status.at',
      'messages.id as message_id',
      'messages.key_id',
      'messages.remote_jid',
      'messages.from_me',
      'messages.participant',
      'messages.instance_id',
    ])
    .where('message_status.instance_id', '=', instanceId)
    .where('messages.instance_id', '=', instanceId);
  if (filter.remoteJid !== undefined) query = query.where('messages.remote_jid', '=', filter.remoteJid);
  if (filter.keyId !== undefined) query = query.where('messages.key_id', '=', filter.keyId);
  const rows = await query.orderBy('message_status.id').limit(page.size).offset(page.skip).execute();
  return rows.map((row) => ({
    id: String(row.status_id),
    keyId: row.key_id,
    remoteJid: row.remote_jid,
    fromMe: row.from_me === 1,
    participant: row.participant,
    pollUpdates: null,
    status: row.status,
    messageId: row.message_id,
    instanceId: row.instance_id,
    date: isoDate(Number(row.at)),
  }));
}
