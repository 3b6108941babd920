// Binds a socket's Baileys events to the mappers; every report goes through one queue so the host sees them in order.
import type { BaileysEventMap } from 'baileys';
import type { WaSocket } from '../socket.js';
import type { InboundContext } from './context.js';
import { onCalls } from './calls.js';
import { onChatsDelete, onChatsUpdate, onChatsUpsert } from './chats.js';
import { onContactsUpdate, onContactsUpsert } from './contacts.js';
import { onGroupParticipants, onGroupsUpdate, onGroupsUpsert } from './groups.js';
import { onLabelsAssociation, onLabelsEdit } from './labels.js';
import { onHistorySet, onMessagesDelete, onMessagesUpdate, onMessagesUpsert, onReceipts } from './messages.js';
import { onPresence } from './presence.js';

export type { InboundContext } from './context.js';

type Handlers = { [E in keyof BaileysEventMap]?: (arg: BaileysEventMap[E], ctx: InboundContext) => Promise<void> };

const inboundHandlers: Handlers = {
  'messages.upsert': onMessagesUpsert,
  'messaging-history.set': onHistorySet,
  'messages.update': onMessagesUpdate,
  'message-receipt.update': onReceipts,
  'messages.delete': onMessagesDelete,
  'contacts.upsert': onContactsUpsert,
  'contacts.update': onContactsUpdate,
  'chats.upsert': onChatsUpsert,
  'chats.update': onChatsUpdate,
  'chats.delete': onChatsDelete,
  'groups.upsert': onGroupsUpsert,
  'groups.update': onGroupsUpdate,
  'group-participants.update': onGroupParticipants,
  'presence.update': onPresence,
  call: onCalls,
  'labels.edit': onLabelsEdit,
  'labels.association': onLabelsAssociation,
  'lid-mapping.update': async (mapping, ctx) => ctx.addresses.remember(mapping.lid, mapping.pn),
};

/**
 * Listens to every mapped event of `socket`. `schedule` queues the work (the connector drops work of a socket
 * that is no longer its live one); a failing mapper is logged and does not stop the others.
 */
export function bindInbound(socket: WaSocket, ctx: InboundContext, schedule: (name: string, work: () => Promise<void>) => void): void {
  for (const name of Object.keys(inboundHandlers) as (keyof BaileysEventMap)[]) {
    const handler = inboundHandlers[name] as ((arg: unknown, ctx: InboundContext) => Promise<void>) | undefined;
    if (!handler) continue;
    // The per-event types are enforced by `Handlers`; here every handler is called with its own event's argument.
    socket.ev.on(name, (arg: unknown) => schedule(name, () => handler(arg, ctx)));
  }
}
