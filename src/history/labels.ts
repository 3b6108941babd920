// The label use cases: an instance's labels (`label/findLabels`), and adding or removing one on a chat (`label/handleLabel`).
import type { Connector } from '../core/connector.js';
import type { ConnectorKinds } from '../core/connector-kind.js';
import { invalidInput, notFound } from '../core/errors.js';
import type { Instance } from '../core/instance.js';
import type { Db } from '../platform/store/types.js';
import { toJid } from '../messages/jid.js';
import type { LabelAnswer, LabelBook } from './label-book.js';

export interface LabelOperationsDeps {
  db: Db;
  book: LabelBook;
  kinds: Pick<ConnectorKinds, 'assertCan'>;
  connectorOf(instance: Instance): Connector;
}

export const labelActions = ['add', 'remove'] as const;
export type LabelAction = (typeof labelActions)[number];

/** handleLabel's answer: the chat, the label, and `add: true` or `remove: true` (as upstream). */
export type HandledLabel = { numberJid: string; labelId: string } & ({ add: true } | { remove: true });

export class LabelOperations {
  constructor(private readonly deps: LabelOperationsDeps) {}

  /** The labels stored for the instance (as its messenger reported them); no round trip to the messenger. */
  async find(instance: Instance): Promise<LabelAnswer[]> {
    this.deps.kinds.assertCan(instance, 'labels');
    return this.deps.book.list(instance);
  }

  /**
   * Adds the label to the chat (or removes it) on the account, then in the chat's row, announcing `labels.association`
   * when that changed the chat. A person the instance has no chat with must be on WhatsApp (404 otherwise, as upstream).
   */
  async handle(instance: Instance, input: { number: string; labelId: string; action: LabelAction }): Promise<HandledLabel> {
    this.deps.kinds.assertCan(instance, 'labels');
    const { labelId, action } = input;
    if (!labelActions.includes(action)) throw invalidInput(`action must be one of: ${labelActions.join(', ')}`);
    if (labelId.trim() === '') throw invalidInput('labelId must not be empty: give the id of a label (GET /label/findLabels lists them)');
    const connector = this.deps.connectorOf(instance);
    if (connector.state() !== 'open' || !connector.labels) {
      throw invalidInput(`instance "${instance.name}" is not connected (state ${connector.state()}); labelling a chat needs a linked instance`);
    }
    const chatId = await this.chatOf(instance, connector, input.number);
    if (action === 'add') await connector.labels.addChatLabel(chatId, labelId);
    else await connector.labels.removeChatLabel(chatId, labelId);
    await this.deps.book.associated(instance, { type: action, chatId, labelId });
    return action === 'add' ? { numberJid: chatId, labelId, add: true } : { numberJid: chatId, labelId, remove: true };
  }

  /** The chat's address: a group or a stored chat as given; another person's address as WhatsApp knows the number. */
  private async chatOf(instance: Instance, connector: Connector, number: string): Promise<string> {
    const jid = toJid(number, 'number');
    if (!jid.endsWith('@s.whatsapp.net') || !connector.contacts) return jid;
    const stored = await this.deps.db
      .selectFrom('chats')
      .select('remote_jid')
      .where('instance_id', '=', instance.id)
      .where('remote_jid', '=', jid)
      .executeTakeFirst();
    if (stored) return jid;
    const [check] = await connector.contacts.onWhatsApp([{ number, jid }]);
    if (!check?.exists) throw notFound('Number is not on WhatsApp');
    return check.jid;
  }
}
