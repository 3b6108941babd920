// How chats and contacts are upserted: a row per address and instance, merged into the stored one when it exists.
import type { UpsertSpec } from '../platform/store/upserts.js';

/** Received messages add to the unread count; the newest message's time is kept; a name given replaces the old one. */
export const chatUpsert: UpsertSpec = {
  table: 'chats',
  conflict: ['instance_id', 'remote_jid'],
  set: [
    '"unread_messages" = "chats"."unread_messages" + excluded."unread_messages"',
    '"last_message_at" = case when "chats"."last_message_at" is null or excluded."last_message_at" > "chats"."last_message_at" then excluded."last_message_at" else "chats"."last_message_at" end',
    '"name" = coalesce(excluded."name", "chats"."name")',
    '"updated_at" = excluded."updated_at"',
  ].join(', '),
};

/** A push name given replaces the old one; none given keeps it (own messages carry none). */
export const contactUpsert: UpsertSpec = {
  table: 'contacts',
  conflict: ['instance_id', 'remote_jid'],
  set: '"push_name" = coalesce(excluded."push_name", "contacts"."push_name"), "updated_at" = excluded."updated_at"',
};

/** Two rows of one chat queued in the same unit, as one. */
export function mergeChatRows(queued: Record<string, unknown>, next: Record<string, unknown>): Record<string, unknown> {
  const time = (row: Record<string, unknown>) => Number(row.last_message_at ?? 0);
  return {
    ...queued,
    unread_messages: Number(queued.unread_messages) + Number(next.unread_messages),
    last_message_at: Math.max(time(queued), time(next)),
    name: next.name ?? queued.name,
    updated_at: next.updated_at,
  };
}

/** Two rows of one contact queued in the same unit, as one. */
export function mergeContactRows(queued: Record<string, unknown>, next: Record<string, unknown>): Record<string, unknown> {
  return { ...queued, push_name: next.push_name ?? queued.push_name, updated_at: next.updated_at };
}

/** The key of an address of an instance among a unit's upserts. */
export function addressKey(instanceId: string, remoteJid: string): string {
  return `${instanceId}\u0000${remoteJid}`;
}
