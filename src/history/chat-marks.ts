// Archiving a chat, marking it unread, and marking it read: on the account through the connector, then on its chat row.
import type { ChatLastMessage, Connector } from '../core/connector.js';
import type { ConnectorKinds } from '../core/connector-kind.js';
import type { EventSource } from '../core/event-envelope.js';
import { invalidInput } from '../core/errors.js';
import type { Instance } from '../core/instance.js';
import type { EventWriter } from '../events/writer.js';
import type { Db } from '../platform/store/types.js';
import { inUnit } from '../platform/store/unit.js';
import type { UpsertSpec } from '../platform/store/upserts.js';
import { timeOrderedId } from '../platform/util/time-ordered-id.js';
import { toJid } from '../messages/jid.js';
import type { KnownAddressBook } from './known.js';
import { epochSeconds } from './filters.js';

export interface ChatMarksDeps {
  db: Db;
  events: EventWriter;
  known: KnownAddressBook;
  kinds: Pick<ConnectorKinds, 'assertCan'>;
  connectorOf(instance: Instance): Connector;
  sourceOf(instance: Instance): EventSource;
}

/** The chat a request names: the last message's chat wins over `chat` (as upstream). */
export interface ChatTarget {
  chat?: string;
  lastMessage?: { key: { id: string; remoteJid: string; fromMe: boolean; participant?: string }; messageTimestamp?: number };
}

/** Only the marks change on an existing chat; a chat without a row gets one. */
const marksUpsert = (column: 'archived' | 'marked_unread'): UpsertSpec => ({
  table: 'chats',
  conflict: ['instance_id', 'remote_jid'],
  set: `"${column}" = excluded."${column}", "updated_at" = excluded."updated_at"`,
});
const archivedUpsert = marksUpsert('archived');
const unreadUpsert = marksUpsert('marked_unread');

export class ChatMarks {
  constructor(private readonly deps: ChatMarksDeps) {}

  /** Archives (or unarchives) the chat on the account and in its chat row; answers the chat and its state now. */
  async archive(instance: Instance, archive: boolean, target: ChatTarget): Promise<{ chatId: string; archived: boolean }> {
    const { jid, connector, last } = await this.prepare(instance, target, 'archiving a chat');
    await connector.chats?.archive(jid, archive, last);
    await this.store(instance, jid, archivedUpsert, { archived: archive ? 1 : 0 }, { archived: archive });
    return { chatId: jid, archived: archive };
  }

  /** Marks the chat unread on the account and in its chat row (its unread count stays as it is, as upstream). */
  async markUnread(instance: Instance, target: ChatTarget): Promise<{ chatId: string; markedChatUnread: true }> {
    const { jid, connector, last } = await this.prepare(instance, target, 'marking a chat unread');
    await connector.chats?.markUnread(jid, last);
    await this.store(instance, jid, unreadUpsert, { marked_unread: 1 }, { markedUnread: true });
    return { chatId: jid, markedChatUnread: true };
  }

  /** Messages of these chats were marked read: their unread counts start again from 0 (`chats.update` where changed). */
  async markedRead(instance: Instance, remoteJids: string[]): Promise<void> {
    const chats = [...new Set(remoteJids)];
    if (chats.length === 0) return;
    await inUnit(this.deps.db, async (unit) => {
      const changed = await unit.tx
        .updateTable('chats')
        .set({ unread_messages: 0, marked_unread: 0, updated_at: Date.now() })
        .where('instance_id', '=', instance.id)
        .where('remote_jid', 'in', chats)
        .where((eb) => eb.or([eb('unread_messages', '>', 0), eb('marked_unread', '=', 1)]))
        .returning('remote_jid')
        .execute();
      if (changed.length === 0) return;
      const data = changed.map((row) => ({ remoteJid: row.remote_jid, instanceId: instance.id, unreadMessages: 0, markedUnread: false }));
      this.deps.events.emit(unit, this.deps.sourceOf(instance), 'CHATS_UPDATE', data);
    });
  }

  private async prepare(instance: Instance, target: ChatTarget, what: string) {
    this.deps.kinds.assertCan(instance, 'chats');
    const given = target.lastMessage?.key.remoteJid ?? target.chat;
    if (given === undefined) throw invalidInput('chat is required (the chat address or number), or lastMessage with its key');
    const jid = toJid(given, target.lastMessage ? 'lastMessage.key.remoteJid' : 'chat');
    const last = target.lastMessage ? givenLastMessage(jid, target.lastMessage) : await this.storedLastMessage(instance.id, jid);
    const connector = this.deps.connectorOf(instance);
    if (connector.state() !== 'open') {
      throw invalidInput(`instance "${instance.name}" is not connected (state ${connector.state()}); ${what} needs a linked instance`);
    }
    return { jid, connector, last };
  }

  /** The chat's newest stored message, or null when none is stored. */
  private async storedLastMessage(instanceId: string, jid: string): Promise<ChatLastMessage | null> {
    const row = await this.deps.db
      .selectFrom('messages')
      .select(['key_id', 'from_me', 'participant', 'message_timestamp'])
      .where('instance_id', '=', instanceId)
      .where('remote_jid', '=', jid)
      .orderBy('message_timestamp', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!row) return null;
    const participant = row.from_me === 1 ? undefined : (row.participant ?? undefined);
    return {
      key: { id: row.key_id, remoteJid: jid, fromMe: row.from_me === 1, ...(participant ? { participant } : {}) },
      messageTimestamp: Number(row.message_timestamp),
    };
  }

  /** Stores the chat's new mark (creating its row if it has none) with a `chats.update` event. */
  private async store(instance: Instance, jid: string, spec: UpsertSpec, marks: Record<string, number>, changed: Record<string, boolean>): Promise<void> {
    const now = Date.now();
    await inUnit(this.deps.db, async (unit) => {
      unit.upsert(spec, jid, {
        id: timeOrderedId(),
        instance_id: instance.id,
        remote_jid: jid,
        name: null,
        unread_messages: 0,
        archived: 0,
        marked_unread: 0,
        labels: '[]',
        last_message_at: null,
        created_at: now,
        updated_at: now,
        ...marks,
      });
      this.deps.events.emit(unit, this.deps.sourceOf(instance), 'CHATS_UPDATE', [{ remoteJid: jid, instanceId: instance.id, ...changed }]);
      unit.afterCommit(() => this.deps.known.chatStored(instance.id, jid));
    });
  }
}

/** The last message as the request gives it: a received group message must name its sender. */
function givenLastMessage(jid: string, last: NonNullable<ChatTarget['lastMessage']>): ChatLastMessage {
  const { id, fromMe, participant } = last.key;
  if (jid.endsWith('@g.us') && !fromMe && !participant) {
    throw invalidInput('lastMessage.key.participant is required for a received group message (the address of who sent it)');
  }
  return {
    key: { id, remoteJid: jid, fromMe, ...(participant ? { participant: toJid(participant, 'lastMessage.key.participant') } : {}) },
    messageTimestamp: last.messageTimestamp === undefined ? Math.floor(Date.now() / 1000) : epochSeconds(last.messageTimestamp, 'lastMessage.messageTimestamp'),
  };
}
