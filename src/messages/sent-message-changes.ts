// Deleting a sent message for everyone and editing its text: every check before anything is sent, then the change stored.
import type { Connector, MessageKeyRef, ProtocolSent } from '../core/connector.js';
import type { ConnectorKinds } from '../core/connector-kind.js';
import { invalidInput, notFound } from '../core/errors.js';
import type { Instance } from '../core/instance.js';
import { toJid } from './jid.js';
import { keyOf, type EditProtocolMessage, type MessageChanges } from './message-changes.js';
import type { MessageRecord } from './records.js';

export interface SentMessageChangesDeps {
  connectorOf(instance: Instance): Connector;
  kinds: Pick<ConnectorKinds, 'assertCan'>;
  changes: MessageChanges;
  /** Now, in epoch ms (tests move it). */
  now?: () => number;
}

/** WhatsApp lets a message be edited for 15 minutes after it was sent. */
const editWindowMs = 15 * 60 * 1000;

/** The message types whose text can be edited. */
const editableTypes = new Set(['conversation', 'extendedTextMessage']);

/** A sent message (Evolution's raw form): a protocol message that left, as the routes answer it. */
export interface SentProtocolMessage {
  key: { remoteJid: string; fromMe: true; id: string };
  message: { protocolMessage: Record<string, unknown> };
  messageTimestamp: string;
  status: 'PENDING';
}

function sentMessage(remoteJid: string, sent: ProtocolSent, protocolMessage: Record<string, unknown>): SentProtocolMessage {
  return {
    key: { remoteJid, fromMe: true, id: sent.keyId },
    message: { protocolMessage },
    messageTimestamp: String(Math.floor(sent.timestampMs / 1000)),
    status: 'PENDING',
  };
}

export class SentMessageChanges {
  private readonly now: () => number;

  constructor(private readonly deps: SentMessageChangesDeps) {
    this.now = deps.now ?? Date.now;
  }

  /**
   * Deletes one of the instance's own sent messages for everyone: it must be stored, sent, and not deleted yet.
   * Answers the revoke message; the stored message becomes DELETED and `messages.delete` is emitted.
   */
  async deleteForEveryone(instance: Instance, request: { id: string; remoteJid: string; fromMe: boolean; participant?: string }): Promise<SentProtocolMessage> {
    this.deps.kinds.assertCan(instance, 'revoke');
    if (!request.fromMe) {
      throw invalidInput(
        "only messages this instance sent can be deleted for everyone (fromMe must be true); deleting a group participant's message as an admin is not supported yet",
      );
    }
    const remoteJid = toJid(request.remoteJid, 'remoteJid');
    const stored = await this.ownStored(instance, request.id, remoteJid, 'remoteJid');
    if (stored.status === 'DELETED') throw invalidInput(`message ${request.id} is already deleted`);
    const connector = this.linked(instance, 'deleting a message for everyone');
    const target: MessageKeyRef = { remoteJid: stored.remoteJid, fromMe: true, id: stored.keyId };
    const sent = await this.revokeThrough(connector, target);
    await this.deps.changes.revoked(instance, target);
    return sentMessage(stored.remoteJid, sent, { key: keyOf(target), type: 'REVOKE' });
  }

  /**
   * Replaces the text of one of the instance's own text messages, within WhatsApp's 15 minutes and unless deleted.
   * Answers the edit message; the stored text is replaced, the status becomes EDITED, `send.message.update` is emitted.
   */
  async edit(
    instance: Instance,
    request: { number: string; text: string; key: { id: string; remoteJid: string; fromMe: boolean } },
  ): Promise<SentProtocolMessage> {
    this.deps.kinds.assertCan(instance, 'edit');
    const { number, text, key } = request;
    if (text.trim() === '') throw invalidInput('text must not be empty: to remove a message, delete it with /chat/deleteMessageForEveryone');
    if (!key.fromMe) throw invalidInput("You cannot edit others' messages: only messages this instance sent (key.fromMe true) can be edited");
    const chat = toJid(number, 'number');
    const keyChat = toJid(key.remoteJid, 'key.remoteJid');
    if (keyChat !== chat) throw invalidInput(`RemoteJid does not match: number is ${chat} but key.remoteJid is ${keyChat}`);
    const stored = await this.ownStored(instance, key.id, chat, 'number');
    if (stored.status === 'DELETED') throw invalidInput('You cannot edit deleted messages');
    if (!editableTypes.has(stored.messageType)) {
      throw invalidInput(`Message not compatible: only text messages can be edited (message ${key.id} is a ${stored.messageType})`);
    }
    const ageMs = this.now() - stored.timestamp * 1000;
    if (ageMs > editWindowMs) {
      throw invalidInput(`messages can be edited for 15 minutes after they were sent; message ${key.id} was sent ${Math.floor(ageMs / 60000)} minutes ago`);
    }
    const connector = this.linked(instance, 'editing a message');
    const target: MessageKeyRef = { remoteJid: stored.remoteJid, fromMe: true, id: stored.keyId };
    const edited = { conversation: text };
    const sent = await this.editThrough(connector, target, edited);
    const protocol: EditProtocolMessage = await this.deps.changes.edited(instance, target, edited, sent.timestampMs, 'SEND_MESSAGE_UPDATE');
    return sentMessage(stored.remoteJid, sent, { ...protocol });
  }

  /** The instance's own stored message `id` in `chat`, sent to the messenger (not still queued or failed). */
  private async ownStored(instance: Instance, id: string, chat: string, chatField: string): Promise<MessageRecord> {
    const stored = await this.deps.changes.find(instance.id, { id, fromMe: true });
    if (!stored) throw notFound(`Message not found: instance "${instance.name}" has sent no message with id ${id}`);
    if (stored.remoteJid !== chat) throw invalidInput(`RemoteJid does not match: message ${id} is in chat ${stored.remoteJid}, not ${chat} (${chatField})`);
    if (stored.status === 'PENDING' || stored.status === 'ERROR') {
      throw invalidInput(`message ${id} has not reached the messenger (status ${stored.status}): there is nothing to change yet`);
    }
    return stored;
  }

  private revokeThrough(connector: Connector, target: MessageKeyRef): Promise<ProtocolSent> {
    // Present whenever the kind's capabilities say `revoke` (checked above).
    if (!connector.messaging.revoke) throw invalidInput('this connector cannot delete messages for everyone');
    return connector.messaging.revoke(target);
  }

  private editThrough(connector: Connector, target: MessageKeyRef, edited: Record<string, unknown>): Promise<ProtocolSent> {
    if (!connector.messaging.edit) throw invalidInput('this connector cannot edit messages');
    return connector.messaging.edit(target, edited);
  }

  private linked(instance: Instance, what: string): Connector {
    const connector = this.deps.connectorOf(instance);
    if (connector.state() !== 'open') {
      throw invalidInput(`instance "${instance.name}" is not connected (state ${connector.state()}); ${what} needs a linked instance`);
    }
    return connector;
  }
}
