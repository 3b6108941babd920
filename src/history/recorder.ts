// Chats and contacts kept with every stored message, sent or received, in the message's own unit of work.
import type { EventSource } from '../core/event-envelope.js';
import type { Instance } from '../core/instance.js';
import type { EventWriter } from '../events/writer.js';
import type { RowSink, UpsertSink } from '../platform/store/unit.js';
import type { MessageRecord } from '../messages/records.js';
import type { StoredMessageHook } from '../messages/stored-message-hook.js';
import type { KnownAddressBook } from './known.js';
import { addressKey, chatUpsert, contactUpsert, mergeChatRows, mergeContactRows } from './rows.js';

export interface HistoryRecorderDeps {
  known: KnownAddressBook;
  events: EventWriter;
  instanceById(id: string): Instance | undefined;
  sourceOf(instance: Instance): EventSource;
  /** DATABASE_SAVE_DATA_CHATS, DATABASE_SAVE_DATA_CONTACTS. */
  saveChats: boolean;
  saveContacts: boolean;
}

/** Addresses that are no chat of their own: the status feed, broadcast lists, channels. */
const noChat = /@(broadcast|newsletter)$/;
/** Addresses that are a person (contacts are people; a group's sender is its participant). */
const person = /@(s\.whatsapp\.net|lid)$/;

/**
 * A message keeps its chat up to date (created with `chats.upsert` the first time; its last message time; received
 * messages add to its unread count unless the instance reads them at once) and its sender's contact (created with
 * `contacts.upsert`, `contacts.update` when the push name changes). Plain bumps of a known chat emit nothing: an
 * event per message would double the events of every send.
 */
export class HistoryRecorder implements StoredMessageHook {
  constructor(private readonly deps: HistoryRecorderDeps) {}

  ready(instanceId: string): Promise<void> | undefined {
    if (!this.deps.saveChats && !this.deps.saveContacts) return undefined;
    return this.deps.known.ready(instanceId);
  }

  stored(unit: UpsertSink, record: MessageRecord, announce: RowSink, arrival: 'live' | 'synced' = 'live'): void {
    if (noChat.test(record.remoteJid)) return;
    const instance = this.deps.instanceById(record.instanceId);
    const known = this.deps.known.of(record.instanceId);
    if (!instance || !known) return;
    const now = Date.now();
    // A synced message's chat and contact were announced by the messenger's own lists (CHATS_SET, CONTACTS_UPSERT).
    const tell = arrival === 'live' ? announce : undefined;
    if (this.deps.saveChats) this.keepChat(unit, tell, instance, known.chats, record, now, arrival);
    if (this.deps.saveContacts) this.keepContact(unit, tell, instance, known.contacts, record, now);
  }

  private keepChat(
    unit: UpsertSink,
    announce: RowSink | undefined,
    instance: Instance,
    chats: Set<string>,
    record: MessageRecord,
    now: number,
    arrival: 'live' | 'synced',
  ): void {
    const jid = record.remoteJid;
    const unread = arrival === 'live' && !record.fromMe && !instance.settings.readMessages ? 1 : 0;
    const name = !record.fromMe && person.test(jid) ? record.pushName || null : null;
    const row = {
      // A new chat takes the id of the message that starts it (ids are unique, and no id is drawn per message).
      id: record.id,
      instance_id: instance.id,
      remote_jid: jid,
      name,
      unread_messages: unread,
      archived: 0,
      marked_unread: 0,
      labels: '[]',
      last_message_at: record.timestamp,
      created_at: now,
      updated_at: now,
    };
    unit.upsert(chatUpsert, addressKey(instance.id, jid), row, mergeChatRows);
    if (chats.has(jid)) return;
    chats.add(jid);
    unit.onRollback(() => chats.delete(jid));
    unit.afterCommit(() => this.deps.known.share(instance.id, jid, undefined));
    if (!announce) return;
    this.deps.events.emit(announce, this.deps.sourceOf(instance), 'CHATS_UPSERT', [
      { remoteJid: jid, instanceId: instance.id, name, unreadMessages: unread, archived: false },
    ]);
  }

  private keepContact(
    unit: UpsertSink,
    announce: RowSink | undefined,
    instance: Instance,
    contacts: Map<string, string | null>,
    record: MessageRecord,
    now: number,
  ): void {
    // The person written with: the chat, or in a group the participant who wrote (own group messages name nobody).
    const jid = person.test(record.remoteJid) ? record.remoteJid : record.fromMe ? null : record.participant;
    if (!jid || !person.test(jid)) return;
    const pushName = record.fromMe ? null : record.pushName || null;
    const isNew = !contacts.has(jid);
    const before = contacts.get(jid) ?? null;
    if (!isNew && (pushName === null || pushName === before)) return;
    unit.upsert(
      contactUpsert,
      addressKey(instance.id, jid),
      { id: record.id, instance_id: instance.id, remote_jid: jid, push_name: pushName, profile_pic_url: null, created_at: now, updated_at: now },
      mergeContactRows,
    );
    contacts.set(jid, pushName ?? before);
    unit.afterCommit(() => this.deps.known.share(instance.id, undefined, [jid, pushName ?? before]));
    unit.onRollback(() => {
      if (isNew) contacts.delete(jid);
      else contacts.set(jid, before);
    });
    if (!announce) return;
    const data = [{ remoteJid: jid, pushName: pushName ?? before, profilePicUrl: null, instanceId: instance.id }];
    this.deps.events.emit(announce, this.deps.sourceOf(instance), isNew ? 'CONTACTS_UPSERT' : 'CONTACTS_UPDATE', data);
  }
}
