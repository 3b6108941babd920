// Deletions for everyone and edits of stored messages: the row's new status and content, its history row, the event.
import type { MessageKeyRef } from '../core/connector.js';
import type { EventName } from '../core/event-catalog.js';
import { eventSourceOf } from '../core/event-envelope.js';
import type { Instance } from '../core/instance.js';
import type { ChangedStatus } from '../core/message-status.js';
import type { EventWriter } from '../events/writer.js';
import type { Db } from '../platform/store/db.js';
import { inUnit, type Unit } from '../platform/store/unit.js';
import { presentMessage, recordFromRow, type MessageRecord } from './records.js';

export interface MessageChangesDeps {
  db: Db;
  events: EventWriter;
  apikeyOf: (instance: Instance) => string;
}

/** The raw protocol message of an edit (Evolution's `messages.edited` / `send.message.update` data). */
export interface EditProtocolMessage {
  key: MessageKeyRef;
  type: 'MESSAGE_EDIT';
  editedMessage: Record<string, unknown>;
  timestampMs: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The key as events and answers show it (participant and the other addresses only when known). */
export function keyOf(key: MessageKeyRef): MessageKeyRef {
  return {
    remoteJid: key.remoteJid,
    ...(key.remoteJidAlt ? { remoteJidAlt: key.remoteJidAlt } : {}),
    fromMe: key.fromMe,
    id: key.id,
    ...(key.participant ? { participant: key.participant } : {}),
    ...(key.participantAlt ? { participantAlt: key.participantAlt } : {}),
  };
}

/** The text an edit carries (`conversation` or `extendedTextMessage.text`), if it is a text edit. */
function editedText(edited: Record<string, unknown>): string | undefined {
  if (typeof edited.conversation === 'string') return edited.conversation;
  const extended = edited.extendedTextMessage;
  return isRecord(extended) && typeof extended.text === 'string' ? extended.text : undefined;
}

/**
 * The stored content with an edit applied: a text replaces the text (both spellings a stored text may carry), a
 * media message's new caption replaces its caption; quotes and mentions of the original stay.
 */
function contentAfterEdit(content: Record<string, unknown>, edited: Record<string, unknown>): Record<string, unknown> {
  const next = structuredClone(content);
  const text = editedText(edited);
  if (text !== undefined) {
    if (isRecord(next.extendedTextMessage)) next.extendedTextMessage.text = text;
    if (typeof next.conversation === 'string' || !isRecord(next.extendedTextMessage)) next.conversation = text;
    return next;
  }
  for (const [type, node] of Object.entries(edited)) {
    const stored = next[type];
    if (isRecord(node) && isRecord(stored) && typeof node.caption === 'string') stored.caption = node.caption;
  }
  return next;
}

export class MessageChanges {
  constructor(private readonly deps: MessageChangesDeps) {}

  /** The stored message of this instance with that id sent (`fromMe`) or received, if any. */
  async find(instanceId: string, key: { id: string; fromMe: boolean }): Promise<MessageRecord | undefined> {
    // No stored id holds a NUL, and PostgreSQL refuses one in a text parameter.
    if (key.id.includes('\0')) return undefined;
    const row = await this.deps.db
      .selectFrom('messages')
      .selectAll()
      .where('instance_id', '=', instanceId)
      .where('key_id', '=', key.id)
      .where('from_me', '=', key.fromMe ? 1 : 0)
      .executeTakeFirst();
    return row ? recordFromRow(row) : undefined;
  }

  /**
   * The message of `key` was deleted for everyone: a stored one becomes DELETED (with its history row) and
   * `messages.delete` carries the key's fields and the stored record; one not stored is announced by its key alone.
   * A message already deleted is not announced again.
   */
  async revoked(instance: Instance, key: MessageKeyRef): Promise<void> {
    await inUnit(this.deps.db, async (unit) => {
      const stored = await this.storedRow(unit, instance.id, key);
      if (stored?.status === 'DELETED') return;
      let data: Record<string, unknown> = { ...keyOf(key) };
      if (stored) {
        // Two deletions racing: only the one that moved the row announces it.
        if (!(await this.storeChange(unit, instance, stored, 'DELETED'))) return;
        data = { ...keyOf(key), ...presentMessage({ ...stored, status: 'DELETED' }) };
      }
      this.deps.events.emit(unit, eventSourceOf(instance, this.deps.apikeyOf), 'MESSAGES_DELETE', data);
    });
  }

  /**
   * The message of `key` was edited: a stored one gets the new text (or caption) and becomes EDITED (with its history
   * row); `event` (`messages.edited` for edits received, `send.message.update` for the API's) carries the protocol
   * message. An edit of a deleted message changes nothing.
   */
  async edited(
    instance: Instance,
    key: MessageKeyRef,
    edited: Record<string, unknown>,
    timestampMs: number,
    event: Extract<EventName, 'MESSAGES_EDITED' | 'SEND_MESSAGE_UPDATE'>,
  ): Promise<EditProtocolMessage> {
    const protocol: EditProtocolMessage = { key: keyOf(key), type: 'MESSAGE_EDIT', editedMessage: edited, timestampMs: String(timestampMs) };
    await inUnit(this.deps.db, async (unit) => {
      const stored = await this.storedRow(unit, instance.id, key);
      if (stored?.status === 'DELETED') return;
      if (stored && !(await this.storeChange(unit, instance, stored, 'EDITED', contentAfterEdit(stored.content, edited)))) return;
      this.deps.events.emit(unit, eventSourceOf(instance, this.deps.apikeyOf), event, protocol);
    });
    return protocol;
  }

  private async storedRow(unit: Unit, instanceId: string, key: MessageKeyRef): Promise<MessageRecord | undefined> {
    if (key.id.includes('\0')) return undefined;
    const row = await unit.tx
      .selectFrom('messages')
      .selectAll()
      .where('instance_id', '=', instanceId)
      .where('key_id', '=', key.id)
      .where('from_me', '=', key.fromMe ? 1 : 0)
      .executeTakeFirst();
    return row ? recordFromRow(row) : undefined;
  }

  /** Stores the change unless the message was deleted meanwhile; true when stored. */
  private async storeChange(unit: Unit, instance: Instance, stored: MessageRecord, status: ChangedStatus, content?: Record<string, unknown>): Promise<boolean> {
    const now = Date.now();
    const updated = await unit.tx
      .updateTable('messages')
      .set({ status, updated_at: now, ...(content ? { content: JSON.stringify(content) } : {}) })
      .where('id', '=', stored.id)
      .where('status', '!=', 'DELETED')
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return false;
    unit.insert('message_status', { message_id: stored.id, instance_id: instance.id, status, detail: null, at: now });
    return true;
  }
}
