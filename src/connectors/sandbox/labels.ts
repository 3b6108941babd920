// The labels of each sandbox account (the messenger's own record): WhatsApp Business's five defaults, then the user's.
import type { Label } from '../../core/connector.js';
import { invalidInput } from '../../core/errors.js';
import type { Instance } from '../../core/instance.js';
import type { Db } from '../../platform/store/db.js';
import type { Unit } from '../../platform/store/unit.js';
import { KeyedSerialQueue } from '../../platform/util/keyed-serial-queue.js';
import { groupedTurnBatch } from '../../platform/util/turn-batch.js';

/** WhatsApp's label colours are a palette of 20, by index. */
export const labelColours = 20;

/** The labels a new WhatsApp Business account has (ids and predefined ids 1–5). */
const defaults: readonly Omit<Label, 'deleted'>[] = [
  { id: '1', name: 'New customer', color: 1, predefinedId: '1' },
  { id: '2', name: 'New order', color: 2, predefinedId: '2' },
  { id: '3', name: 'Pending payment', color: 3, predefinedId: '3' },
  { id: '4', name: 'Paid', color: 4, predefinedId: '4' },
  { id: '5', name: 'Order complete', color: 5, predefinedId: '5' },
];

/** A label to create (no id) or change (id; `deleted: true` deletes it). */
export interface LabelEdit {
  id?: string;
  name?: string;
  color?: number;
  deleted?: boolean;
}

const maxNameLength = 100;

export class SandboxLabels {
  /** One account's label changes run one at a time (a new label takes the next free id). */
  private readonly changes = new KeyedSerialQueue();

  /** The label rows of the accounts asked for in one turn (many opening at once), read with one query. */
  private readonly reads = groupedTurnBatch(
    (ids) => this.db.selectFrom('sandbox_labels').selectAll().where('instance_id', 'in', ids).orderBy('created_at').orderBy('label_id').execute(),
    (row) => row.instance_id,
  );

  constructor(private readonly db: Db) {}

  /** A newly linked account starts with the default labels only. */
  reset(instanceId: string): Promise<void> {
    return this.changes.run(instanceId, () => this.resetNow(instanceId));
  }

  private async resetNow(instanceId: string): Promise<void> {
    const now = Date.now();
    await this.db.transaction().execute(async (tx) => {
      await tx.deleteFrom('sandbox_labels').where('instance_id', '=', instanceId).execute();
      await tx
        .insertInto('sandbox_labels')
        .values(
          defaults.map((label, order) => ({
            instance_id: instanceId,
            label_id: label.id,
            name: label.name,
            color: label.color,
            predefined_id: label.predefinedId ?? null,
            created_at: now + order,
            updated_at: now + order,
          })),
        )
        .execute();
    });
  }

  /** The account's labels, oldest first. */
  async all(instanceId: string): Promise<Label[]> {
    return (await this.reads.call(instanceId)).map(labelOf);
  }

  async has(instanceId: string, labelId: string): Promise<boolean> {
    return (await this.find(instanceId, labelId)) !== undefined;
  }

  /** Creates, changes or deletes a label; answers it as it is now (`deleted: true` when deleted) and whether it is new. */
  edit(instanceId: string, edit: LabelEdit): Promise<{ label: Label; created: boolean }> {
    return this.changes.run(instanceId, () => this.change(instanceId, edit));
  }

  private async change(instanceId: string, edit: LabelEdit): Promise<{ label: Label; created: boolean }> {
    const name = edit.name === undefined ? undefined : checkedName(edit.name);
    if (edit.color !== undefined && (!Number.isInteger(edit.color) || edit.color < 0 || edit.color >= labelColours)) {
      throw invalidInput(`color must be an integer from 0 to ${labelColours - 1} (WhatsApp's label palette)`);
    }
    const now = Date.now();
    if (edit.id === undefined) {
      if (edit.deleted) throw invalidInput('id is required to delete a label');
      if (name === undefined) throw invalidInput('name is required to create a label');
      const id = String((await this.highestId(instanceId)) + 1);
      const color = edit.color ?? Number(id) % labelColours;
      await this.db
        .insertInto('sandbox_labels')
        .values({ instance_id: instanceId, label_id: id, name, color, predefined_id: null, created_at: now, updated_at: now })
        .execute();
      return { label: { id, name, color, deleted: false }, created: true };
    }
    const stored = await this.find(instanceId, edit.id);
    if (!stored) throw invalidInput(`label ${edit.id} does not exist on this account; leave id out to create a label`);
    if (edit.deleted) {
      await this.db.deleteFrom('sandbox_labels').where('instance_id', '=', instanceId).where('label_id', '=', edit.id).execute();
      return { label: { ...stored, deleted: true }, created: false };
    }
    const label = { ...stored, name: name ?? stored.name, color: edit.color ?? stored.color };
    await this.db
      .updateTable('sandbox_labels')
      .set({ name: label.name, color: label.color, updated_at: now })
      .where('instance_id', '=', instanceId)
      .where('label_id', '=', edit.id)
      .execute();
    return { label, created: false };
  }

  private async find(instanceId: string, labelId: string): Promise<Label | undefined> {
    const row = await this.db.selectFrom('sandbox_labels').selectAll().where('instance_id', '=', instanceId).where('label_id', '=', labelId).executeTakeFirst();
    return row && labelOf(row);
  }

  /** The largest numeric label id of the account (0 when none): a new label takes the next. */
  private async highestId(instanceId: string): Promise<number> {
    const rows = await this.db.selectFrom('sandbox_labels').select('label_id').where('instance_id', '=', instanceId).execute();
    return rows.reduce((highest, row) => Math.max(highest, Number(row.label_id) || 0), 0);
  }
}

function labelOf(row: { label_id: string; name: string; color: number; predefined_id: string | null }): Label {
  return {
    id: row.label_id,
    name: row.name,
    color: Number(row.color),
    deleted: false,
    ...(row.predefined_id !== null ? { predefinedId: row.predefined_id } : {}),
  };
}

function checkedName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw invalidInput('name must not be empty');
  if (trimmed.length > maxNameLength) throw invalidInput(`name must be at most ${maxNameLength} characters`);
  return trimmed;
}

/** The labels of a deleted instance (a removal hook). */
export async function removeSandboxLabelsOf(unit: Unit, instance: Instance): Promise<void> {
  await unit.tx.deleteFrom('sandbox_labels').where('instance_id', '=', instance.id).execute();
}
