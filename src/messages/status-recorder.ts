// Moves a stored message forward through its statuses, keeping history and emitting MESSAGES_UPDATE for each step.
import type { Instance } from '../instances/model.js';
import type { EventWriter } from '../events/writer.js';
import type { Dialect } from '../store/db.js';
import type { Unit } from '../store/unit.js';
import type { WriteUnit } from '../store/write-unit.js';
import { recordFromRow, type MessageRecord } from './records.js';
import { statusSteps, type MessageStatus } from './status.js';
import { eventSourceOf } from '../instances/event-source.js';

/** What a status event needs to know of a message. */
export type StatusSubject = Pick<MessageRecord, 'id' | 'keyId' | 'remoteJid' | 'fromMe' | 'participant'>;

interface StatusChange {
  message: StatusSubject;
  steps: MessageStatus[];
}

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

  /**
   * Records `next` for several messages of this instance at once: its own messages (the worker's batches), or with
   * `ownFirst` the message of each key id as `record` finds it (own first, else a received one: connector receipts).
   */
  async recordMany(
    unit: Unit,
    instance: Instance,
    keyIds: string[],
    next: MessageStatus,
    options: { detail?: string; ownFirst?: boolean } = {},
  ): Promise<void> {
    if (keyIds.length === 0) return;
    let query = unit.tx
      .selectFrom('messages')
      .select(['id', 'key_id', 'remote_jid', 'from_me', 'participant', 'status'])
      .where('instance_id', '=', instance.id)
      .where('key_id', 'in', keyIds)
      // Locked in id order, as other batches lock them, so two batches never wait on each other in a cycle.
      .orderBy('id');
    // Own messages only unless `ownFirst`: filtered here, not in SQL, since a `from_me` condition leads PostgreSQL
    // (before its statistics exist) to walk all of the instance's messages instead of looking up the key ids.
    if (this.dialect === 'postgres') query = query.forUpdate();
    const byKey = new Map<string, Awaited<ReturnType<typeof query.execute>>[number]>();
    for (const row of await query.execute()) {
      if (!options.ownFirst && row.from_me !== 1) continue;
      const seen = byKey.get(row.key_id);
      if (!seen || (row.from_me === 1 && seen.from_me !== 1)) byKey.set(row.key_id, row);
    }
    const changes: StatusChange[] = [];
    for (const keyId of keyIds) {
      const row = byKey.get(keyId);
      if (!row) continue;
      const steps = statusSteps(row.status as MessageStatus, next);
      if (steps.length === 0) continue;
      changes.push({
        message: { id: row.id, keyId: row.key_id, remoteJid: row.remote_jid, fromMe: row.from_me === 1, participant: row.participant },
        steps,
      });
    }
    await this.apply(unit, instance, changes, options.detail);
  }

  /**
   * SERVER_ACK for own messages just handed to the messenger, as one guarded write of `unit`: only those still
   * PENDING move on, with their history rows and MESSAGES_UPDATE events (a receipt that overtook the send has already
   * recorded SERVER_ACK on its way past, and a message that failed meanwhile stays as it is).
   */
  markSent(unit: WriteUnit, instance: Instance, messages: StatusSubject[]): void {
    if (messages.length === 0) return;
    const now = Date.now();
    unit.guardBy(
      unit.db
        .updateTable('messages')
        .set({ status: 'SERVER_ACK', updated_at: now })
        .where('id', 'in', messages.map((m) => m.id))
        .where('status', '=', 'PENDING')
        .returning('id'),
    );
    const source = eventSourceOf(instance, this.apikeyOf);
    for (const message of messages) {
      const sink = unit.guarded(message.id);
      sink.insert('message_status', { message_id: message.id, instance_id: instance.id, status: 'SERVER_ACK', detail: null, at: now });
      this.events.emit(sink, source, 'MESSAGES_UPDATE', statusData(instance, message, 'SERVER_ACK'));
    }
  }

  private async advance(unit: Unit, instance: Instance, record: MessageRecord, next: MessageStatus, detail?: string) {
    const steps = statusSteps(record.status, next);
    await this.apply(unit, instance, steps.length > 0 ? [{ message: record, steps }] : [], detail);
    return steps;
  }

  /** Stores the new statuses (one UPDATE per final status), their history rows and MESSAGES_UPDATE events. */
  private async apply(unit: Unit, instance: Instance, changes: StatusChange[], detail?: string): Promise<void> {
    if (changes.length === 0) return;
    const now = Date.now();
    const byFinal = new Map<MessageStatus, string[]>();
    for (const { message, steps } of changes) {
      const final = steps[steps.length - 1];
      byFinal.set(final, [...(byFinal.get(final) ?? []), message.id]);
    }
    for (const [status, ids] of byFinal) {
      await unit.tx.updateTable('messages').set({ status, updated_at: now }).where('id', 'in', ids).execute();
    }
    const source = eventSourceOf(instance, this.apikeyOf);
    for (const { message, steps } of changes) {
      for (const status of steps) {
        unit.insert('message_status', {
          message_id: message.id,
          instance_id: instance.id,
          status,
          detail: status === 'ERROR' ? (detail ?? null) : null,
          at: now,
        });
        this.events.emit(unit, source, 'MESSAGES_UPDATE', statusData(instance, message, status, detail));
      }
    }
  }
}

/** The data of a MESSAGES_UPDATE event (Evolution's shape; `error` on ERROR). */
function statusData(instance: Instance, message: StatusSubject, status: MessageStatus, detail?: string) {
  return {
    keyId: message.keyId,
    remoteJid: message.remoteJid,
    fromMe: message.fromMe,
    participant: message.participant,
    status,
    instanceId: instance.id,
    messageId: message.id,
    ...(status === 'ERROR' && detail ? { error: detail } : {}),
  };
}
