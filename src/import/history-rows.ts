// Evolution's messages, chats and contacts of one instance as rows of Switchboard's history tables (the find routes).
import type { Insertable } from 'kysely';
import { messageStatuses } from '../core/message-status.js';
import { sourceOfId } from '../messages/ids.js';
import type { Database } from '../platform/store/schema.js';
import { timeOrderedId } from '../platform/util/time-ordered-id.js';
import type { EvolutionHistory, EvolutionMessage } from './evolution-model.js';

export interface HistoryRows {
  messages: Insertable<Database['messages']>[];
  /** The status each message had in Evolution, as its one recorded status (findMessages shows it as MessageUpdate). */
  statuses: Insertable<Database['message_status']>[];
  chats: Insertable<Database['chats']>[];
  contacts: Insertable<Database['contacts']>[];
  /** The account's labels (`label/findLabels`); chats keep their label ids. */
  labels: Insertable<Database['labels']>[];
  /** What was left out and why (rows without a key, labels…). */
  notCarried: string[];
}

const sources = new Set(['ios', 'android', 'web', 'desktop', 'unknown']);
const statuses = new Set<string>([...messageStatuses, 'EDITED', 'DELETED']);

interface MessageKey {
  id: string;
  remoteJid: string;
  fromMe: boolean;
  participant?: string;
  remoteJidAlt?: string;
  participantAlt?: string;
}

function keyOf(message: EvolutionMessage): MessageKey | null {
  const key = message.key as Record<string, unknown> | null;
  if (!key || typeof key !== 'object' || typeof key.id !== 'string' || typeof key.remoteJid !== 'string' || !key.id || !key.remoteJid) return null;
  const str = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
  return {
    id: key.id,
    remoteJid: key.remoteJid,
    fromMe: key.fromMe === true || key.fromMe === 'true',
    participant: str(key.participant),
    remoteJidAlt: str(key.remoteJidAlt),
    participantAlt: str(key.participantAlt),
  };
}

/** Evolution's status names are Switchboard's; a row without one gets what a stored message of its direction has. */
function statusOf(status: string | null, fromMe: boolean): string {
  if (status && statuses.has(status)) return status;
  return fromMe ? 'SERVER_ACK' : 'DELIVERY_ACK';
}

export function historyRows(instanceId: string, history: EvolutionHistory): HistoryRows {
  const now = Date.now();
  const notCarried: string[] = [];
  const messages = new Map<string, Insertable<Database['messages']>>();
  const lastAt = new Map<string, number>();
  let keyless = 0;
  for (const message of history.messages) {
    const key = keyOf(message);
    if (!key) {
      keyless++;
      continue;
    }
    const content = message.message && typeof message.message === 'object' && !Array.isArray(message.message) ? message.message : {};
    // Evolution may hold one message twice; Switchboard keeps a key once per direction (the last row wins).
    messages.set(`${key.id}\u0000${key.fromMe}`, {
      id: timeOrderedId(),
      instance_id: instanceId,
      key_id: key.id,
      remote_jid: key.remoteJid,
      remote_jid_alt: key.remoteJidAlt ?? null,
      from_me: key.fromMe ? 1 : 0,
      participant: key.participant ?? message.participant ?? null,
      participant_alt: key.participantAlt ?? null,
      push_name: message.pushName,
      message_type: message.messageType,
      content: JSON.stringify(content),
      status: statusOf(message.status, key.fromMe),
      message_timestamp: message.messageTimestamp,
      source: message.source && sources.has(message.source) ? message.source : sourceOfId(key.id),
      idempotency_key: null,
      request_hash: null,
      created_at: now,
      updated_at: now,
    });
    lastAt.set(key.remoteJid, Math.max(lastAt.get(key.remoteJid) ?? 0, message.messageTimestamp));
  }
  if (keyless > 0) notCarried.push(`${keyless} messages without a key id or chat: left out`);

  const chats = new Map<string, Insertable<Database['chats']>>();
  for (const chat of history.chats) {
    const labels = Array.isArray(chat.labels) ? chat.labels.filter((l): l is string => typeof l === 'string') : [];
    chats.set(chat.remoteJid, {
      id: timeOrderedId(),
      instance_id: instanceId,
      remote_jid: chat.remoteJid,
      name: chat.name,
      unread_messages: chat.unreadMessages,
      archived: 0,
      marked_unread: 0,
      labels: JSON.stringify(labels),
      last_message_at: lastAt.get(chat.remoteJid) ?? null,
      created_at: now,
      updated_at: chat.updatedAt ?? now,
    });
  }
  const contacts = new Map<string, Insertable<Database['contacts']>>();
  for (const contact of history.contacts) {
    contacts.set(contact.remoteJid, {
      id: timeOrderedId(),
      instance_id: instanceId,
      remote_jid: contact.remoteJid,
      push_name: contact.pushName,
      profile_pic_url: contact.profilePicUrl,
      created_at: now,
      updated_at: now,
    });
  }
  const statusRows = [...messages.values()].map((row) => ({
    message_id: row.id,
    instance_id: instanceId,
    status: row.status,
    detail: null,
    at: Number(row.message_timestamp) * 1000,
  }));
  const labels = new Map<string, Insertable<Database['labels']>>();
  const unusable: string[] = [];
  for (const label of history.labels) {
    // Evolution keeps WhatsApp's palette index as text (`${label.color}`).
    const color = Number(label.color);
    if (!label.labelId || label.color.trim() === '' || !Number.isInteger(color)) {
      unusable.push(`"${label.name}"`);
      continue;
    }
    labels.set(label.labelId, {
      instance_id: instanceId,
      label_id: label.labelId,
      name: label.name,
      color,
      predefined_id: label.predefinedId,
      // A millisecond apart: findLabels lists them in Evolution's order.
      created_at: now + labels.size,
      updated_at: now,
    });
  }
  if (unusable.length > 0) notCarried.push(`labels without an id or a palette colour: ${unusable.join(', ')}`);
  return {
    messages: [...messages.values()],
    statuses: statusRows,
    chats: [...chats.values()],
    contacts: [...contacts.values()],
    labels: [...labels.values()],
    notCarried,
  };
}
