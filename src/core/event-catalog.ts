// The event catalogue: Evolution's 31 event names, their wire names, and the by-events URL suffix.

export const eventCatalog = {
  APPLICATION_STARTUP: 'application.startup',
  QRCODE_UPDATED: 'qrcode.updated',
  MESSAGES_SET: 'messages.set',
  MESSAGES_UPSERT: 'messages.upsert',
  MESSAGES_EDITED: 'messages.edited',
  MESSAGES_UPDATE: 'messages.update',
  MESSAGES_DELETE: 'messages.delete',
  SEND_MESSAGE: 'send.message',
  SEND_MESSAGE_UPDATE: 'send.message.update',
  CONTACTS_SET: 'contacts.set',
  CONTACTS_UPSERT: 'contacts.upsert',
  CONTACTS_UPDATE: 'contacts.update',
  PRESENCE_UPDATE: 'presence.update',
  CHATS_SET: 'chats.set',
  CHATS_UPSERT: 'chats.upsert',
  CHATS_UPDATE: 'chats.update',
  CHATS_DELETE: 'chats.delete',
  GROUPS_UPSERT: 'groups.upsert',
  GROUP_UPDATE: 'groups.update',
  GROUP_PARTICIPANTS_UPDATE: 'group-participants.update',
  CONNECTION_UPDATE: 'connection.update',
  LABELS_EDIT: 'labels.edit',
  LABELS_ASSOCIATION: 'labels.association',
  CALL: 'call',
  TYPEBOT_START: 'typebot.start',
  TYPEBOT_CHANGE_STATUS: 'typebot.change-status',
  REMOVE_INSTANCE: 'remove.instance',
  LOGOUT_INSTANCE: 'logout.instance',
  INSTANCE_CREATE: 'instance.create',
  INSTANCE_DELETE: 'instance.delete',
  STATUS_INSTANCE: 'status.instance',
} as const;

export type EventName = keyof typeof eventCatalog;
export const eventNames = Object.keys(eventCatalog) as EventName[];

/** Names accepted in `events` arrays besides the catalogue's own (upstream's inconsistent spelling). */
const aliases: Record<string, EventName> = { GROUPS_UPDATE: 'GROUP_UPDATE' };

/** Resolves a name from a request (`MESSAGES_UPSERT`, `messages.upsert`, `GROUPS_UPDATE`) to a catalogue name. */
export function resolveEventName(value: string): EventName | undefined {
  // Own keys only: `in` would take inherited ones (toString, constructor, __proto__) for event names.
  if (Object.hasOwn(eventCatalog, value)) return value as EventName;
  const upper = value.replace(/[.-]/g, '_').toUpperCase();
  if (Object.hasOwn(eventCatalog, upper)) return upper as EventName;
  return Object.hasOwn(aliases, upper) ? aliases[upper] : undefined;
}

export function wireName(event: EventName): string {
  return eventCatalog[event];
}

/** The by-events URL suffix: `messages.upsert` → `messages-upsert`. */
export function eventSuffix(event: EventName): string {
  return eventCatalog[event].replace(/[._]/g, '-').toLowerCase();
}

/** True when a subscription list lets the event through (an empty list means every event). */
export function subscribed(events: readonly EventName[], event: EventName): boolean {
  return events.length === 0 || events.includes(event);
}

/**
 * The rule of the global `<PREFIX>_EVENTS_<NAME>` switches: every event passes unless switched off; once any name
 * is switched on, only the names switched on pass. `GROUPS_UPDATE` is accepted for `GROUP_UPDATE`.
 */
export function globalFilterAllows(filter: Record<string, boolean>, event: EventName): boolean {
  const explicit = filter[event] ?? (event === 'GROUP_UPDATE' ? filter.GROUPS_UPDATE : undefined);
  const anyOn = Object.values(filter).some((v) => v);
  return anyOn ? explicit === true : explicit !== false;
}
