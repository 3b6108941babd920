// Stored messages and the result record shape Evolution clients read (send answers, SEND_MESSAGE, MESSAGES_UPSERT).
import type { Selectable } from 'kysely';
import type { Db } from '../platform/store/db.js';
import type { MessagesTable } from '../platform/store/schema.js';
import type { ChangedStatus, MessageStatus } from '../core/message-status.js';

export interface MessageRecord {
  id: string;
  instanceId: string;
  keyId: string;
  remoteJid: string;
  /** The chat's other address (@lid or phone), when known. */
  remoteJidAlt?: string | null;
  fromMe: boolean;
  participant: string | null;
  /** The group sender's other address (@lid or phone), when known. */
  participantAlt?: string | null;
  pushName: string | null;
  messageType: string;
  content: Record<string, unknown>;
  /** Its delivery status, or EDITED / DELETED once changed by its sender. */
  status: MessageStatus | ChangedStatus;
  timestamp: number;
  source: string;
}

/** The columns of a stored message that make its record. */
export const messageRecordColumns = [
  'id',
  'instance_id',
  'key_id',
  'remote_jid',
  'remote_jid_alt',
  'from_me',
  'participant',
  'participant_alt',
  'push_name',
  'message_type',
  'content',
  'status',
  'message_timestamp',
  'source',
] as const;
export type MessageRecordRow = Pick<Selectable<MessagesTable>, (typeof messageRecordColumns)[number]>;

/** A stored message's key as the history answers it: both addresses of the chat and of a group sender, when known. */
export function storedKeyOf(record: MessageRecord) {
  return {
    remoteJid: record.remoteJid,
    fromMe: record.fromMe,
    id: record.keyId,
    ...(record.participant ? { participant: record.participant } : {}),
    ...(record.remoteJidAlt ? { remoteJidAlt: record.remoteJidAlt } : {}),
    ...(record.participantAlt ? { participantAlt: record.participantAlt } : {}),
  };
}

export function recordFromRow(row: MessageRecordRow): MessageRecord {
  return {
    id: row.id,
    instanceId: row.instance_id,
    keyId: row.key_id,
    remoteJid: row.remote_jid,
    remoteJidAlt: row.remote_jid_alt,
    fromMe: row.from_me === 1,
    participant: row.participant,
    participantAlt: row.participant_alt,
    pushName: row.push_name,
    messageType: row.message_type,
    content: JSON.parse(row.content) as Record<string, unknown>,
    status: row.status as MessageStatus | ChangedStatus,
    timestamp: row.message_timestamp,
    source: row.source,
  };
}

export function rowFromRecord(record: MessageRecord, extra: { idempotencyKey?: string | null; requestHash?: string | null } = {}): Selectable<MessagesTable> {
  const now = Date.now();
  return {
    id: record.id,
    instance_id: record.instanceId,
    key_id: record.keyId,
    remote_jid: record.remoteJid,
    remote_jid_alt: record.remoteJidAlt ?? null,
    from_me: record.fromMe ? 1 : 0,
    participant: record.participant,
    participant_alt: record.participantAlt ?? null,
    push_name: record.pushName,
    message_type: record.messageType,
    content: JSON.stringify(record.content),
    status: record.status,
    message_timestamp: record.timestamp,
    source: record.source,
    idempotency_key: extra.idempotencyKey ?? null,
    request_hash: extra.requestHash ?? null,
    created_at: now,
    updated_at: now,
  };
}

/** The JSON shape of a message for API answers and event payloads. */
export function presentMessage(record: MessageRecord) {
  const contextInfo = findContextInfo(record.content);
  return {
    key: {
      remoteJid: record.remoteJid,
      fromMe: record.fromMe,
      id: record.keyId,
      ...(record.participant && !record.fromMe ? { participant: record.participant } : {}),
      // Both addresses of a person (phone and @lid), as WhatsApp Web's keys carry them: clients match either.
      ...(record.remoteJidAlt ? { remoteJidAlt: record.remoteJidAlt } : {}),
      ...(record.participantAlt && !record.fromMe ? { participantAlt: record.participantAlt } : {}),
    },
    pushName: record.pushName ?? '',
    status: record.status,
    message: record.content,
    contextInfo,
    messageType: record.messageType,
    messageTimestamp: String(record.timestamp),
    instanceId: record.instanceId,
    source: record.source,
    // Status posts and group messages name their sender (the own account for sent ones), as WhatsApp's records do.
    ...((record.remoteJid === 'status@broadcast' || record.remoteJid.endsWith('@g.us')) && record.fromMe ? { participant: record.participant ?? '' } : {}),
  };
}

function findContextInfo(content: Record<string, unknown>): unknown {
  for (const value of Object.values(content)) {
    if (value && typeof value === 'object' && 'contextInfo' in value) {
      return (value as { contextInfo: unknown }).contextInfo ?? null;
    }
  }
  return null;
}

export async function findMessageByKey(db: Db, instanceId: string, keyId: string): Promise<MessageRecord | undefined> {
  // No stored id holds a NUL (ids are ours or WhatsApp's), and PostgreSQL refuses one in a text parameter.
  if (keyId.includes('\0')) return undefined;
  const row = await db
    .selectFrom('messages')
    .selectAll()
    .where('instance_id', '=', instanceId)
    .where('key_id', '=', keyId)
    .orderBy('from_me', 'desc')
    .executeTakeFirst();
  return row ? recordFromRow(row) : undefined;
}

export async function findByIdempotencyKey(db: Db, instanceId: string, key: string) {
  const row = await db.selectFrom('messages').selectAll().where('instance_id', '=', instanceId).where('idempotency_key', '=', key).executeTakeFirst();
  return row ? { record: recordFromRow(row), requestHash: row.request_hash, createdAt: row.created_at } : undefined;
}

/** Why a message ended ERROR, as its last ERROR status recorded it (read through the instance's statuses). */
export async function errorDetailOf(db: Db, instanceId: string, messageId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('message_status')
    .select('detail')
    .where('instance_id', '=', instanceId)
    .where('message_id', '=', messageId)
    .where('status', '=', 'ERROR')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.detail ?? undefined;
}
