// The chat use cases that act through the live connection: privacy settings, presence, marking messages read.
import type { Connector, NumberCheck, OwnPresence, Presence } from '../core/connector.js';
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
  /** Told which chats had messages marked read (the history store starts their unread counts again). */
  markedRead?(instance: Instance, remoteJids: string[]): Promise<void>;
}

/** Every presence a chat can show. */
export const presences: readonly Presence[] = ['available', 'unavailable', 'composing', 'recording', 'paused'];

/** The presences an account shows without a chat (`instance/setPresence`). */
export const ownPresences: readonly OwnPresence[] = ['available', 'unavailable'];

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

  /** The account's global presence (online or offline); answered as set. */
  async setOwnPresence(instance: Instance, presence: OwnPresence | undefined): Promise<void> {
    this.deps.kinds.assertCan(instance, 'presence');
    if (!presence) throw invalidInput(`presence is required: one of ${ownPresences.join(', ')}`);
    if (!ownPresences.includes(presence)) throw invalidInput(`presence must be one of: ${ownPresences.join(', ')}`);
    const connector = this.linkedConnector(instance, 'setting the presence');
    await connector.presence?.setOwnPresence(presence);
  }

  /** Whether each number has an account, in the order asked; groups, lists and the status feed are refused. */
  async whatsappNumbers(instance: Instance, numbers: string[]): Promise<NumberCheck[]> {
    this.deps.kinds.assertCan(instance, 'whatsappNumbers');
    const requests = numbers.map((number, i) => ({ number, jid: personJid(number, `numbers[${i}]`) }));
    const connector = this.linkedConnector(instance, 'checking numbers');
    return (await connector.contacts?.onWhatsApp(requests)) ?? [];
  }

  async markRead(instance: Instance, messages: { remoteJid: string; id: string }[]): Promise<void> {
    const connector = this.linkedConnector(instance, 'marking messages read');
    const keys = messages.map((m, i) => ({ remoteJid: toJid(m.remoteJid, `readMessages[${i}].remoteJid`), keyId: m.id }));
    await connector.messaging.markRead(keys);
    await this.deps.markedRead?.(
      instance,
      keys.map((key) => key.remoteJid),
    );
  }

  private linkedConnector(instance: Instance, what: string): Connector {
    const connector = this.deps.connectorOf(instance);
    if (connector.state() !== 'open') {
      throw invalidInput(`instance "${instance.name}" is not connected (state ${connector.state()}); ${what} needs a linked instance`);
    }
    return connector;
  }
}

/** A person's address from a number or an address (phone or LID); a 400 naming the field for anything else. */
function personJid(input: string, field: string): string {
  const jid = toJid(input, field);
  if (!jid.endsWith('@s.whatsapp.net') && !jid.endsWith('@lid')) {
    throw invalidInput(`${field} "${input}" is not a phone number: only people are checked (numbers or their addresses), not groups, lists or the status feed`);
  }
  return jid;
}
