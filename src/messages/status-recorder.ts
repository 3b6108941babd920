// Moves a stored message forward through its statuses, keeping history and emitting MESSAGES_UPDATE for each step.
import type { Instance } from '../instances/model.js';
import type { EventWriter } from '../events/writer.js';
import type { Dialect } from '../store/db.js';
import type { Unit } from '../store/unit.js';
import { recordFromRow, type MessageRecord } from './records.js';
import { statusSteps, type MessageStatus } from './status.js';
import { eventSourceOf } from '../instances/event-source.js';

export class StatusRecorder {
  constructor(
    private readonly events: EventWriter,
    private readonly dialect: Dialect,
    private readonly apikeyOf: (instance: Instance) => string,
  ) {}

  /**
   * Records `next` for the message with `keyId` (own messages first); intermediate statuses a later receipt implies
   * are recorded too, stale ones ignored. Returns the steps recorded.
   */
  async record(unit: Unit, instance: Instance, keyId: string, next: MessageStatus, detail?: string): Promise<MessageStatus[]> {
    let query = unit.tx
      .selectFrom('messages')
      .selectAll()
      .where('instance_id', '=', instance.id)
      .where('key_id', '=', keyId)
      .orderBy('from_me', 'desc')
      .limit(1);
    // SQLite serialises write transactions already; PostgreSQL needs the row lock so receipts racing each other step once.
    if (this.dialect === 'postgres') query = query.forUpdate();
    const row = await query.executeTakeFirst();
    if (!row) return [];
    return this.advance(unit, instance, recordFromRow(row), next, detail);
  }

  /** Records `next` for several of this instance's own messages at once (the worker's batches). */
  async recordMany(unit: Unit, instance: Instance, keyIds: string[], next: MessageStatus): Promise<void> {
    if (keyIds.length === 0) return;
    let query = unit.tx
      .selectFrom('messages')
      .selectAll()
      .where('instance_id', '=', instance.id)
      .where('from_me', '=', 1)
      .where('key_id', 'in', keyIds)
      .orderBy('created_at');
    if (this.dialect === 'postgres') query = query.forUpdate();
    const rows = await query.execute();
    const byKey = new Map(rows.map((row) => [row.key_id, recordFromRow(row)]));
    for (const keyId of keyIds) {
      const record = byKey.get(keyId);
      if (record) await this.advance(unit, instance, record, next);
    }
  }

  private async advance(unit: Unit, instance: Instance, record: MessageRecord, next: MessageStatus, detail?: string) {
    const steps = statusSteps(record.status, next);
    if (steps.length === 0) return [];
    const now = Date.now();
    await unit.tx
      .updateTable('messages')
      .set({ status: steps[steps.length - 1], updated_at: now })
      .where('id', '=', record.id)
      .execute();
    const source = eventSourceOf(instance, this.apikeyOf);
    for (const status of steps) {
      unit.insert('message_status', {
        message_id: record.id,
        instance_id: instance.id,
        status,
        detail: status === 'ERROR' ? (detail ?? null) : null,
        at: now,
      });
      this.events.emit(unit, source, 'MESSAGES_UPDATE', {
        keyId: record.keyId,
        remoteJid: record.remoteJid,
        fromMe: record.fromMe,
        participant: record.participant,
        status,
        instanceId: instance.id,
        messageId: record.id,
        ...(status === 'ERROR' && detail ? { error: detail } : {}),
      });
    }
    return steps;
  }
}
