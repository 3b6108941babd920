// Chat changes on the account through the socket: archive and mark unread (WhatsApp app-state patches).
import type { ChatLastMessage, ChatsModule } from '../../core/connector.js';
import type { WaSocket } from './socket.js';

/** The chat's newest message as Baileys' message range takes it; none known: an empty range. */
function lastMessages(last: ChatLastMessage | null) {
  return last ? [{ key: last.key, messageTimestamp: last.messageTimestamp }] : [];
}

export function chatsModule(socket: () => WaSocket): ChatsModule {
  return {
    archive: (jid, archive, last) => socket().chatModify({ archive, lastMessages: lastMessages(last) }, jid),
    markUnread: (jid, last) => socket().chatModify({ markRead: false, lastMessages: lastMessages(last) }, jid),
  };
}
