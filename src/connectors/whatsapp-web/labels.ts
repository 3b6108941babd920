// Chat labels on the account through the socket (WhatsApp app-state patches; Baileys' addChatLabel / removeChatLabel).
import { ProviderError, type LabelsModule } from '../../core/connector.js';
import type { WaSocket } from './socket.js';

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** WhatsApp's refusal of a label patch (a closed socket, a label the account lacks…) as a 400 with its words. */
async function patched(what: string, patch: () => Promise<void>): Promise<void> {
  try {
    await patch();
  } catch (error) {
    throw new ProviderError('refused', [`Unable to ${what} chat`, messageOf(error)]);
  }
}

export function labelsModule(socket: () => WaSocket): LabelsModule {
  return {
    addChatLabel: (jid, labelId) => patched('add label to', () => socket().addChatLabel(jid, labelId)),
    removeChatLabel: (jid, labelId) => patched('remove label from', () => socket().removeChatLabel(jid, labelId)),
  };
}
