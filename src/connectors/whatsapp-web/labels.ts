// Chat labels on the account through the socket (WhatsApp app-state patches; Baileys' addChatLabel / removeChatLabel).
import type { LabelsModule } from '../../core/connector.js';
import type { WaSocket } from './socket.js';

export function labelsModule(socket: () => WaSocket): LabelsModule {
  return {
    addChatLabel: (jid, labelId) => socket().addChatLabel(jid, labelId),
    removeChatLabel: (jid, labelId) => socket().removeChatLabel(jid, labelId),
  };
}
