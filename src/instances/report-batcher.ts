// Received messages and receipts reported by connectors, recorded in bulk: one transaction per turn of the event loop.
import type { Db } from '../store/db.js';
import { inUnit, type Unit } from '../store/unit.js';
import { BatchCommit } from '../store/group-commit.js';
import type { EventWriter, EventSource } from '../events/writer.js';
import type { StatusRecorder } from '../messages/status-recorder.js';
import type { MessageStatus } from '../messages/status.js';
import { presentMessage, rowFromRecord, type MessageRecord } from '../messages/records.js';
import type { Instance } from './model.js';

type Report =
  | { kind: 'received'; instance: Instance; record: MessageRecord }
  | { kind: 'status'; instance: Instance; keyId: string; status: MessageStatus; detail?: string };

export interface ReportBatcherDeps {
  db: Db;
  events: EventWriter;
  statuses: StatusRecorder;
  sourceOf: (instance: Instance) => EventSource;
}

/** Reports recorded together at most. */
const maxBatch = 512;
/** Rows per multi-row insert of received messages. */
const rowsPerInsert = 200;

/**
 * Reports made before the next turn of the event loop are recorded in one transaction, in the order they were made:
 * received messages with one multi-row insert (a message already stored is skipped: delivered twice, stored once),
 * receipts of one instance and status with one update. Batches commit one after the other; if a batch fails, each
 * of its reports is recorded alone, so one bad report fails only its own caller.
 */
export class ReportBatcher {
  private readonly batches: BatchCommit<Report, void>;

  constructor(private readonly deps: ReportBatcherDeps) {
    this.batches = new BatchCommit<Report, void>(
      deps.db,
      inUnit,
      async (unit, reports) => {
        await this.record(unit, reports);
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

  private async record(unit: Unit, reports: Report[]): Promise<void> {
    // Messages first, so receipts of the same batch find them.
    const received = reports.filter((r): r is Extract<Report, { kind: 'received' }> => r.kind === 'received');
    if (received.length > 0) {
      const stored = await this.insertNew(unit, received.map((r) => r.record));
      for (const { instance, record } of received) {
        if (stored.has(record.id)) this.deps.events.emit(unit, this.deps.sourceOf(instance), 'MESSAGES_UPSERT', presentMessage(record));
      }
    }
    // Receipts in the order made; a run of one instance, status and detail is recorded at once.
    const receipts = reports.filter((r): r is Extract<Report, { kind: 'status' }> => r.kind === 'status');
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
      await this.deps.statuses.recordMany(unit, first.instance, keyIds, first.status, { detail: first.detail, ownFirst: true });
      start = end;
    }
  }

  /** Inserts the messages not stored yet (same instance, key id and direction); answers the ids inserted. */
  private async insertNew(unit: Unit, records: MessageRecord[]): Promise<Set<string>> {
    const inserted = new Set<string>();
    for (let i = 0; i < records.length; i += rowsPerInsert) {
      const rows = await unit.tx
        .insertInto('messages')
        .values(records.slice(i, i + rowsPerInsert).map((record) => rowFromRecord(record)))
        .onConflict((oc) => oc.columns(['instance_id', 'key_id', 'from_me']).doNothing())
        .returning('id')
        .execute();
      for (const row of rows) inserted.add(row.id);
    }
    return inserted;
  }
}
