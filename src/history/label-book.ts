// An instance's labels and its chats' labels in the store: what the messenger reports and the API changes, announced once.
import type { Label, LabelAssociation, LabelChange } from '../core/connector.js';
import type { EventSource } from '../core/event-envelope.js';
import type { Instance } from '../core/instance.js';
import type { EventWriter } from '../events/writer.js';
import type { LabelKeeper } from '../instances/connector-host.js';
import type { Db, Tx } from '../platform/store/types.js';
import { inUnit } from '../platform/store/unit.js';
import { timeOrderedId } from '../platform/util/time-ordered-id.js';
import { groupedTurnBatch } from '../platform/util/turn-batch.js';
import type { KnownAddressBook } from './known.js';

export interface LabelBookDeps {
  db: Db;
  events: EventWriter;
  known: KnownAddressBook;
  sourceOf(instance: Instance): EventSource;
}

/** A label as `label/findLabels` answers it (Evolution's `Label` row: the colour as a string). */
export interface LabelAnswer {
  color: string;
  name: string;
  id: string;
  predefinedId: string | null;
}

/** A label row as `synced` compares it. */
interface StoredLabel {
  label_id: string;
  name: string;
  color: number | string;
  predefined_id: string | null;
}

/** Whether storing `kept` would change nothing: the same label ids, each with the same name, colour and predefined id. */
function sameLabels(stored: readonly StoredLabel[], kept: readonly Label[]): boolean {
  if (stored.length !== kept.length) return false;
  const byId = new Map(stored.map((row) => [row.label_id, row]));
  return kept.every((label) => {
    const row = byId.get(label.id);
    return row !== undefined && row.name === label.name && Number(row.color) === label.color && row.predefined_id === (label.predefinedId ?? null);
  });
}

function labelIdsOf(stored: string): string[] {
  const parsed: unknown = JSON.parse(stored);
  return Array.isArray(parsed) ? parsed.filter((id): id is string => typeof id === 'string') : [];
}

/**
 * Labels are stored per instance (`labels`), a chat's label ids in its chat row (`chats.labels`). Every change is
 * idempotent: a label reported again as it is, or a label added to a chat that has it, changes nothing and announces
 * nothing; anything else is stored and announced (`labels.edit`, `labels.association`) in one unit of work.
 */
export class LabelBook implements LabelKeeper {
  /** The stored labels of the instances synced in one turn (many connecting at once), read with one query. */
  private readonly storedReads = groupedTurnBatch(
    (ids) => this.deps.db.selectFrom('labels').select(['instance_id', 'label_id', 'name', 'color', 'predefined_id']).where('instance_id', 'in', ids).execute(),
    (row) => row.instance_id,
  );

  constructor(private readonly deps: LabelBookDeps) {}

  async changed(instance: Instance, change: LabelChange): Promise<void> {
    if (change.kind === 'edit') await this.edited(instance, change.label);
    else if (change.kind === 'sync') await this.synced(instance, change.labels);
    else await this.associated(instance, change);
  }

  /** The instance's labels, oldest first. */
  async list(instance: Instance): Promise<LabelAnswer[]> {
    const rows = await this.deps.db
      .selectFrom('labels')
      .select(['label_id', 'name', 'color', 'predefined_id'])
      .where('instance_id', '=', instance.id)
      .orderBy('created_at')
      .orderBy('label_id')
      .execute();
    return rows.map((row) => ({ color: String(row.color), name: row.name, id: row.label_id, predefinedId: row.predefined_id }));
  }

  /** A label created or changed (stored), or deleted (forgotten, and taken off every chat that had it). */
  async edited(instance: Instance, label: Label): Promise<void> {
    const now = Date.now();
    await inUnit(this.deps.db, async (unit) => {
      const stored = await unit.tx
        .selectFrom('labels')
        .select(['name', 'color', 'predefined_id'])
        .where('instance_id', '=', instance.id)
        .where('label_id', '=', label.id)
        .executeTakeFirst();
      if (label.deleted) {
        if (!stored) return;
        await unit.tx.deleteFrom('labels').where('instance_id', '=', instance.id).where('label_id', '=', label.id).execute();
        await this.takeOffChats(unit.tx, instance.id, label.id, now);
      } else {
        const predefined = label.predefinedId ?? null;
        if (stored && stored.name === label.name && Number(stored.color) === label.color && stored.predefined_id === predefined) return;
        await unit.tx
          .insertInto('labels')
          .values({
            instance_id: instance.id,
            label_id: label.id,
            name: label.name,
            color: label.color,
            predefined_id: predefined,
            created_at: now,
            updated_at: now,
          })
          .onConflict((oc) =>
            oc.columns(['instance_id', 'label_id']).doUpdateSet({ name: label.name, color: label.color, predefined_id: predefined, updated_at: now }),
          )
          .execute();
      }
      this.deps.events.emit(unit, this.deps.sourceOf(instance), 'LABELS_EDIT', {
        id: label.id,
        name: label.name,
        color: label.color,
        deleted: label.deleted,
        ...(label.predefinedId !== undefined ? { predefinedId: label.predefinedId } : {}),
        instance: instance.name,
      });
    });
  }

  /** The account's labels as they are now: stored as they are (others forgotten), without an event. */
  async synced(instance: Instance, labels: Label[]): Promise<void> {
    const now = Date.now();
    const kept = labels.filter((label) => !label.deleted);
    // Synced at every connect, and mostly as stored: then nothing is written (a reconnect of many costs one read).
    if (sameLabels(await this.storedReads.call(instance.id), kept)) return;
    if (kept.length === 0) {
      // No labels left (the account's last ones went): one statement, no transaction around it.
      await this.deps.db.deleteFrom('labels').where('instance_id', '=', instance.id).execute();
      return;
    }
    await inUnit(this.deps.db, async (unit) => {
      await unit.tx
        .deleteFrom('labels')
        .where('instance_id', '=', instance.id)
        .where(
          'label_id',
          'not in',
          kept.map((label) => label.id),
        )
        .execute();
      for (const [order, label] of kept.entries()) {
        const predefined = label.predefinedId ?? null;
        // One millisecond apart: findLabels lists them in the order the messenger gave them.
        const at = now + order;
        await unit.tx
          .insertInto('labels')
          .values({
            instance_id: instance.id,
            label_id: label.id,
            name: label.name,
            color: label.color,
            predefined_id: predefined,
            created_at: at,
            updated_at: at,
          })
          .onConflict((oc) => oc.columns(['instance_id', 'label_id']).doUpdateSet({ name: label.name, color: label.color, predefined_id: predefined }))
          .execute();
      }
    });
  }

  /**
   * A label added to or removed from a chat (its row created if it has none); answers whether that changed the chat.
   * The chat's row is written first, which locks it: changes of one chat's labels go one after the other.
   */
  async associated(instance: Instance, { type, chatId, labelId }: LabelAssociation): Promise<boolean> {
    const now = Date.now();
    return inUnit(this.deps.db, async (unit) => {
      await unit.tx
        .insertInto('chats')
        .values({
          id: timeOrderedId(),
          instance_id: instance.id,
          remote_jid: chatId,
          name: null,
          unread_messages: 0,
          archived: 0,
          marked_unread: 0,
          labels: '[]',
          last_message_at: null,
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) => oc.columns(['instance_id', 'remote_jid']).doUpdateSet({ updated_at: now }))
        .execute();
      const row = await unit.tx
        .selectFrom('chats')
        .select('labels')
        .where('instance_id', '=', instance.id)
        .where('remote_jid', '=', chatId)
        .executeTakeFirstOrThrow();
      const labels = labelIdsOf(row.labels);
      if (labels.includes(labelId) === (type === 'add')) return false;
      const next = type === 'add' ? [...labels, labelId] : labels.filter((id) => id !== labelId);
      await unit.tx
        .updateTable('chats')
        .set({ labels: JSON.stringify(next) })
        .where('instance_id', '=', instance.id)
        .where('remote_jid', '=', chatId)
        .execute();
      this.deps.events.emit(unit, this.deps.sourceOf(instance), 'LABELS_ASSOCIATION', { instance: instance.name, type, chatId, labelId });
      unit.afterCommit(() => this.deps.known.chatStored(instance.id, chatId));
      return true;
    });
  }

  /** A deleted label leaves every chat of the instance that had it (as on the phone). */
  private async takeOffChats(tx: Tx, instanceId: string, labelId: string, now: number): Promise<void> {
    const chats = await tx
      .selectFrom('chats')
      .select(['id', 'labels'])
      .where('instance_id', '=', instanceId)
      .where('labels', 'like', `%${JSON.stringify(labelId)}%`)
      .execute();
    for (const chat of chats) {
      const labels = labelIdsOf(chat.labels);
      if (!labels.includes(labelId)) continue;
      await tx
        .updateTable('chats')
        .set({ labels: JSON.stringify(labels.filter((id) => id !== labelId)), updated_at: now })
        .where('id', '=', chat.id)
        .execute();
    }
  }
}
