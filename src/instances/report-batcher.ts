// Received messages and receipts reported by connectors, recorded in bulk: one batch per turn of the event loop.
import type { Db } from '../platform/store/db.js';
import { inWriteUnit } from '../platform/store/write-unit.js';
import { BatchCommit } from '../platform/store/group-commit.js';
import type { EventWriter } from '../events/writer.js';
import type { EventSource } from '../core/event-envelope.js';
import type { StatusRecorder } from '../messages/status-recorder.js';
import type { MessageStatus } from '../core/message-status.js';
import { presentMessage, rowFromRecord, type MessageRecord } from '../messages/records.js';
import type { Instance } from '../core/instance.js';
import type { StoredMessageHook } from '../messages/stored-message-hook.js';

type Report =
  | { kind: 'received'; instance: Instance; record: MessageRecord }
  | { kind: 'status'; instance: Instance; keyId: string; status: MessageStatus; detail?: string };

export interface ReportBatcherDeps {
  db: Db;
  events: EventWriter;
  statuses: StatusRecorder;
  sourceOf: (instance: Instance) => EventSource;
  /** What is kept with each received message in its unit (chats, contacts). */
  alongside?: StoredMessageHook;
  /** Whether received messages are stored (DATABASE_SAVE_DATA_NEW_MESSAGE); they are announced either way. */
  keepReceived?: boolean;
}

/** Reports recorded together at most. */
const maxBatch = 512;
/** Rows per multi-row insert of received messages. */
const rowsPerInsert = 200;

/**
 * Reports made before the next turn of the event loop are recorded together: received messages with one multi-row
 * insert (a message already stored is skipped: delivered twice, stored once), then the receipts in one transaction,
 * those of one instance and status with one update. Batches commit one after the other; if a batch fails, each of
 * its reports is recorded alone, so one bad report fails only its own caller.
 */
export class ReportBatcher {
  private readonly batches: BatchCommit<Report, void, Db>;

  constructor(private readonly deps: ReportBatcherDeps) {
    this.batches = new BatchCommit<Report, void, Db>(
      deps.db,
      // Each part of a batch is a unit of its own (see `record`).
      (db, work) => work(db),
      async (db, reports) => {
        await this.record(db, reports);
        return reports.map(() => undefined);
      },
      maxBatch,
    );
  }

  received(instance: Instance, record: MessageRecord): Promise<void> {
    return this.batches.submit({ kind: 'received', instance, record });
  }

  status(instance: Instance, keyId: string, status: MessageStatus, detail?: string): Promise<void> {
    return this.batches.submit({ kind: 'status', instance, keyId, status, detail });
  }

  /**
   * Received messages first (one write: the messages not stored yet, and their MESSAGES_UPSERT), so receipts of the
   * same batch find them; then the receipts, a run of them at a time (see `StatusRecorder.recordMany`: read, then one
   * guarded write, no transaction held in between). Recording either again is harmless (a message already
   * stored is skipped, a status already reached is not a step), so a batch that fails half way is retried report by
   * report without duplicates.
   */
  private async record(db: Db, reports: Report[]): Promise<void> {
    const received = reports.filter((r): r is Extract<Report, { kind: 'received' }> => r.kind === 'received');
    const alongside = this.deps.alongside;
    if (alongside) {
      const waiting = [...new Set(received.map((r) => r.instance.id))].map((id) => alongside.ready(id)).filter((w) => w !== undefined);
      if (waiting.length > 0) await Promise.all(waiting);
    }
    for (let i = 0; i < received.length; i += rowsPerInsert) await this.insertNew(db, received.slice(i, i + rowsPerInsert));
    // Receipts in the order made; a run of one instance, status and detail is recorded at once.
    const receipts = reports.filter((r): r is Extract<Report, { kind: 'status' }> => r.kind === 'status');
    if (receipts.length === 0) return;
    for (let start = 0; start < receipts.length; ) {
      const first = receipts[start];
      let end = start + 1;
      while (
        end < receipts.length &&
        receipts[end].instance.id === first.instance.id &&
        receipts[end].status === first.status &&
        receipts[end].detail === first.detail
      ) {
        end++;
      }
      const keyIds = [...new Set(receipts.slice(start, end).map((r) => r.keyId))];
      await this.deps.statuses.recordMany(db, first.instance, keyIds, first.status, { detail: first.detail, ownFirst: true });
      start = end;
    }
  }

  /**
   * Inserts the messages not stored yet (same instance, key id and direction), each with its MESSAGES_UPSERT, in one
   * atomic write: the events are kept only for the messages the INSERT answers as inserted.
   */
  private async insertNew(db: Db, received: Extract<Report, { kind: 'received' }>[]): Promise<void> {
    const keep = this.deps.keepReceived !== false;
    await inWriteUnit(db, (unit) => {
      if (keep) {
        unit.guardBy(
          db
            .insertInto('messages')
            .values(received.map(({ record }) => rowFromRecord(record)))
            .onConflict((oc) => oc.columns(['instance_id', 'key_id', 'from_me']).doNothing())
            .returning('id'),
        );
      }
      for (const { instance, record } of received) {
        // Not stored: nothing tells a copy delivered twice from the first, so each is announced.
        const announce = keep ? unit.guarded(record.id) : unit;
        this.deps.events.emit(announce, this.deps.sourceOf(instance), 'MESSAGES_UPSERT', presentMessage(record));
        this.deps.alongside?.stored(unit, record, announce);
      }
    });
  }
}
