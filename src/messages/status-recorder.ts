// Moves a stored message forward through its statuses, keeping history and emitting MESSAGES_UPDATE for each step.
import type { Instance } from '../core/instance.js';
import type { EventWriter } from '../events/writer.js';
import type { EventSource } from '../core/event-envelope.js';
import { sql } from 'kysely';
import type { Db, Dialect } from '../platform/store/db.js';
import type { RowSink, Unit } from '../platform/store/unit.js';
import { inWriteUnit, type WriteUnit } from '../platform/store/write-unit.js';
import { recordFromRow, type MessageRecord } from './records.js';
import { statusSteps, type MessageStatus } from '../core/message-status.js';
import { eventSourceOf } from '../core/event-envelope.js';

/** What a status event needs to know of a message. */
export type StatusSubject = Pick<MessageRecord, 'id' | 'keyId' | 'remoteJid' | 'remoteJidAlt' | 'fromMe' | 'participant'>;

interface StatusChange {
  message: StatusSubject;
  steps: MessageStatus[];
}

/** A change that holds only while the message's status is still `from`. */
interface GuardedChange extends StatusChange {
  from: MessageStatus;
}

/** Reads and guarded writes of one batch of receipts before the rest is left to later receipts (never reached in practice). */
const maxOptimisticAttempts = 5;

export class StatusRecorder {
  constructor(
    private readonly events: EventWriter,
    private readonly dialect: Dialect,
    private readonly apikeyOf: (instance: Instance) => string,
    /** Whether each status is kept as a history row (DATABASE_SAVE_MESSAGE_UPDATE); the message's own status is kept always. */
    private readonly keepHistory = true,
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
   * Records `next` for several messages of this instance at once: its own messages, or with `ownFirst` the message of
   * each key id as `record` finds it (own first, else a received one: connector receipts). Optimistic, with no
   * transaction held between reading and writing (on SQLite that would hold the store's one connection across turns
   * of the event loop; on PostgreSQL it took row locks): the statuses are read, then one guarded write moves each
   * message on only if its status is still the one read, with its history rows and events. A message another receipt
   * moved meanwhile is read again and tried again.
   */
  async recordMany(db: Db, instance: Instance, keyIds: string[], next: MessageStatus, options: { detail?: string; ownFirst?: boolean } = {}): Promise<void> {
    let remaining = [...new Set(keyIds)];
    for (let attempt = 0; remaining.length > 0 && attempt < maxOptimisticAttempts; attempt++) {
      const changes = await this.changesFor(db, instance, remaining, next, options.ownFirst === true);
      if (changes.length === 0) return;
      const moved = await inWriteUnit(db, (unit) => this.applyGuarded(unit, instance, changes, options.detail));
      remaining = changes.filter((change) => !moved.has(change.message.id)).map((change) => change.message.keyId);
    }
  }

  /** The steps each message of `keyIds` would take to reach `next`, from the status it has now. */
  private async changesFor(db: Db, instance: Instance, keyIds: string[], next: MessageStatus, ownFirst: boolean): Promise<GuardedChange[]> {
    const rows = await db
      .selectFrom('messages')
      .select(['id', 'key_id', 'remote_jid', 'remote_jid_alt', 'from_me', 'participant', 'status'])
      .where('instance_id', '=', instance.id)
      .where('key_id', 'in', keyIds)
      .execute();
    // Own messages only unless `ownFirst`: filtered here, not in SQL, since a `from_me` condition leads PostgreSQL
    // (before its statistics exist) to walk all of the instance's messages instead of looking up the key ids.
    const byKey = new Map<string, (typeof rows)[number]>();
    for (const row of rows) {
      if (!ownFirst && row.from_me !== 1) continue;
      const seen = byKey.get(row.key_id);
      if (!seen || (row.from_me === 1 && seen.from_me !== 1)) byKey.set(row.key_id, row);
    }
    const changes: GuardedChange[] = [];
    for (const keyId of keyIds) {
      const row = byKey.get(keyId);
      if (!row) continue;
      const from = row.status as MessageStatus;
      const steps = statusSteps(from, next);
      if (steps.length === 0) continue;
      changes.push({
        message: {
          id: row.id,
          keyId: row.key_id,
          remoteJid: row.remote_jid,
          remoteJidAlt: row.remote_jid_alt,
          fromMe: row.from_me === 1,
          participant: row.participant,
        },
        from,
        steps,
      });
    }
    return changes;
  }

  /**
   * One guarded write: each message moves to its last step only if its status is still `from`; its history rows and
   * MESSAGES_UPDATE events count only for the messages that moved.
   */
  private applyGuarded(unit: WriteUnit, instance: Instance, changes: GuardedChange[], detail?: string): void {
    const now = Date.now();
    const finalOf = (change: GuardedChange) => change.steps[change.steps.length - 1];
    const whens = changes.map((change) => sql`when ${change.message.id} then ${finalOf(change)}`);
    unit.guardBy(
      unit.db
        .updateTable('messages')
        .set({ status: sql<string>`case ${sql.ref('id')} ${sql.join(whens, sql` `)} end`, updated_at: now })
        .where(
          'id',
          'in',
          changes.map((change) => change.message.id),
        )
        .where((eb) => eb.or(changes.map((change) => eb.and([eb('id', '=', change.message.id), eb('status', '=', change.from)]))))
        .returning('id'),
    );
    const source = eventSourceOf(instance, this.apikeyOf);
    for (const change of changes) this.writeSteps(unit.guarded(change.message.id), source, instance, change, now, detail);
  }

  /** A message's history rows and MESSAGES_UPDATE events, one per step. */
  private writeSteps(sink: RowSink, source: EventSource, instance: Instance, { message, steps }: StatusChange, now: number, detail?: string): void {
    for (const status of steps) {
      // ERROR rows are kept regardless: they hold why a send failed (errorDetailOf).
      if (this.keepHistory || status === 'ERROR') {
        sink.insert('message_status', {
          message_id: message.id,
          instance_id: instance.id,
          status,
          detail: status === 'ERROR' ? (detail ?? null) : null,
          at: now,
        });
      }
      this.events.emit(sink, source, 'MESSAGES_UPDATE', statusData(instance, message, status, detail));
    }
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
        .where(
          'id',
          'in',
          messages.map((m) => m.id),
        )
        .where('status', '=', 'PENDING')
        .returning('id'),
    );
    const source = eventSourceOf(instance, this.apikeyOf);
    for (const message of messages) this.writeSteps(unit.guarded(message.id), source, instance, { message, steps: ['SERVER_ACK'] }, now);
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
    for (const change of changes) this.writeSteps(unit, source, instance, change, now, detail);
  }
}

/** The data of a MESSAGES_UPDATE event (Evolution's shape; `error` on ERROR). */
function statusData(instance: Instance, message: StatusSubject, status: MessageStatus, detail?: string) {
  return {
    keyId: message.keyId,
    remoteJid: message.remoteJid,
    ...(message.remoteJidAlt ? { remoteJidAlt: message.remoteJidAlt } : {}),
    fromMe: message.fromMe,
    participant: message.participant,
    status,
    instanceId: instance.id,
    messageId: message.id,
    ...(status === 'ERROR' && detail ? { error: detail } : {}),
  };
}
