// The chat use cases that act through the live connection: privacy settings, presence, marking messages read.
import type { Connector, Presence } from '../core/connector.js';
import type { ConnectorKinds } from '../core/connector-kind.js';
import { invalidInput } from '../core/errors.js';
import type { Instance, PrivacySettings } from '../core/instance.js';
import { toJid } from './jid.js';

export interface ChatOperationsDeps {
  /** The instance's connector (created when it has none yet). */
  connectorOf(instance: Instance): Connector;
  kinds: Pick<ConnectorKinds, 'assertCan'>;
  /** Stores the instance's privacy settings (applied again whenever it links). */
  storePrivacy(instance: Instance, privacy: PrivacySettings): Promise<unknown>;
}

/** Every presence a chat can show. */
export const presences: readonly Presence[] = ['available', 'unavailable', 'composing', 'recording', 'paused'];

/** Presences that end by themselves after a delay (the others are states, not activities). */
const endsAfterDelay = (presence: Presence) => presence !== 'paused' && presence !== 'available' && presence !== 'unavailable';

export class ChatOperations {
  constructor(private readonly deps: ChatOperationsDeps) {}

  /** Stored either way; a linked account gets it now, an unlinked one when it links. */
  async updatePrivacy(instance: Instance, privacy: PrivacySettings): Promise<void> {
    this.deps.kinds.assertCan(instance, 'privacy');
    const connector = this.deps.connectorOf(instance);
    if (connector.state() === 'open') await connector.privacy?.updatePrivacy(privacy);
    await this.deps.storePrivacy(instance, privacy);
  }

  /** Shows `presence` in the chat; an activity (typing, recording) ends after `delay` ms without holding the caller. */
  async sendPresence(instance: Instance, request: { number?: string; presence?: Presence; delay: number }): Promise<void> {
    this.deps.kinds.assertCan(instance, 'presence');
    const { number, presence, delay } = request;
    if (!number) throw invalidInput('number is required');
    if (!presence) throw invalidInput(`presence is required: one of ${presences.join(', ')}`);
    const chat = toJid(number);
    const connector = this.linkedConnector(instance, 'sending a presence');
    await connector.presence?.sendPresence(chat, presence);
    if (delay > 0 && endsAfterDelay(presence)) {
      const timer = setTimeout(() => {
        if (connector.state() === 'open') void connector.presence?.sendPresence(chat, 'paused').catch(() => undefined);
      }, delay);
      timer.unref();
    }
  }

  async markRead(instance: Instance, messages: { remoteJid: string; id: string }[]): Promise<void> {
    const connector = this.linkedConnector(instance, 'marking messages read');
    await connector.messaging.markRead(messages.map((m, i) => ({ remoteJid: toJid(m.remoteJid, `readMessages[${i}].remoteJid`), keyId: m.id })));
  }

  private linkedConnector(instance: Instance, what: string): Connector {
    const connector = this.deps.connectorOf(instance);
    if (connector.state() !== 'open') {
      throw invalidInput(`instance "${instance.name}" is not connected (state ${connector.state()}); ${what} needs a linked instance`);
    }
    return connector;
  }
}
