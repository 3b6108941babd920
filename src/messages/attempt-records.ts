// What delivering queued sends records: first attempts counted and announced, sends done (SERVER_ACK) or failed (ERROR).
import type { Db } from '../platform/store/db.js';
import { inUnit } from '../platform/store/unit.js';
import { inWriteUnit, type WriteUnit } from '../platform/store/write-unit.js';
import type { EventWriter } from '../events/writer.js';
import type { Instance } from '../core/instance.js';
import { eventSourceOf } from '../core/event-envelope.js';
import type { StatusRecorder } from './status-recorder.js';
import { presentMessage, type MessageRecord } from './records.js';
import type { QueuePayload } from './send-queue.js';
import type { SendOutcomes } from './send-outcomes.js';
import { countAttempt, countFirstAttempts, dropMediaBlob, dropMediaBlobs, removeQueued, removeSent, setSender, type QueueRow } from './queue-queries.js';
import { payloadOf, storedMessageOf } from './queued-sends.js';
import type { OwnershipFence } from '../platform/cluster/ownership-fence.js';

export interface AttemptRecordDeps {
  db: Db;
  events: EventWriter;
  statuses: StatusRecorder;
  apikeyOf(instance: Instance): string;
  /** Told the first attempt's outcome of each send (the API waits on it for synchronous connectors). */
  outcomes?: SendOutcomes;
  onOutcome?(instance: Instance, result: 'delivered' | 'error'): void;
  /** Sends are recorded sent only by the node that owns their instance (a stale owner's write fails whole). */
  fence?: OwnershipFence;
}

/** The worker's bookkeeping goes after the store requests that answer clients (SQLite; see `SqliteThread.run`). */
const background = { background: true };

export class AttemptRecords {
  constructor(private readonly deps: AttemptRecordDeps) {}

  /** First attempt of a run: counted, and announced with `send.message` (retries are the same message leaving again). */
  markAttempted(unit: WriteUnit, instance: Instance, rows: QueueRow[]): void {
    countFirstAttempts(
      unit,
      rows.map((r) => r.seq),
    );
    const source = eventSourceOf(instance, this.deps.apikeyOf);
    for (const row of rows) {
      const record = storedMessageOf(row);
      if (!record) continue;
      this.fillSender(unit, instance, record);
      this.deps.events.emit(unit, source, 'SEND_MESSAGE', presentMessage(record));
    }
  }

  /** A run's first attempt, in a write of its own (not joined to the write completing the run before it). */
  async markAttemptedAlone(instance: Instance, rows: QueueRow[]): Promise<void> {
    await inWriteUnit(this.deps.db, (unit) => this.markAttempted(unit, instance, rows), background);
  }

  /**
   * One send's attempt counted, in a write of its own. `pacingWaitMs`: a paced send's wait at the pacing gate, carried
   * by its `send.message`.
   */
  async countAttempt(instance: Instance, row: QueueRow, pacingWaitMs?: number): Promise<void> {
    const record = storedMessageOf(row);
    await inWriteUnit(this.deps.db, (unit) => {
      countAttempt(unit, row.seq, row.attempts + 1);
      // send.message announces the first attempt only; retries are the same message leaving again.
      if (record && row.attempts === 0) {
        this.fillSender(unit, instance, record);
        const data = presentMessage(record);
        this.deps.events.emit(unit, eventSourceOf(instance, this.deps.apikeyOf), 'SEND_MESSAGE', pacingWaitMs === undefined ? data : { ...data, pacingWaitMs });
      }
    });
  }

  /**
   * A status posted before its instance was linked was stored without its poster (`participant: ""`): it leaves as the
   * account it is sent from, so the record and its events name it from here on.
   */
  private fillSender(unit: WriteUnit, instance: Instance, record: MessageRecord): void {
    if (record.participant !== '' || !instance.ownerJid) return;
    record.participant = instance.ownerJid;
    if (!record.pushName && instance.profileName) record.pushName = instance.profileName;
    setSender(unit, record.id, record.participant, record.pushName);
  }

  /**
   * Records sent messages in one write: off the queue, their kept media dropped, SERVER_ACK; and `upcoming`, the
   * chat's next run, marked as attempted in the same write.
   */
  async complete(instance: Instance, rows: QueueRow[], payloads: QueuePayload[], upcoming: QueueRow[]): Promise<void> {
    const { fence } = this.deps;
    await inWriteUnit(
      this.deps.db,
      (unit) => {
        fence?.guard(unit, instance.id);
        removeSent(
          unit,
          rows.map((r) => r.seq),
        );
        const blobs = payloads.map((p) => p.outbound.mediaBlobId).filter((id): id is string => !!id);
        if (blobs.length > 0) dropMediaBlobs(unit, blobs);
        const sent = rows.map((row) => storedMessageOf(row)).filter((record): record is MessageRecord => !!record);
        this.deps.statuses.markSent(unit, instance, sent);
        if (upcoming.length > 0) this.markAttempted(unit, instance, upcoming);
      },
      background,
    ).catch((error: unknown) => {
      throw fence ? fence.refusal(error, instance.id) : error;
    });
    for (const row of rows) this.deps.outcomes?.settle(row.message_id, { kind: 'sent' });
    for (let i = 0; i < rows.length; i++) this.deps.onOutcome?.(instance, 'delivered');
  }

  /** A send that waited past its expiry: it will not leave. */
  failExpired(instance: Instance, row: QueueRow): Promise<void> {
    return this.fail(instance, row, 'the send expired before the instance could deliver it');
  }

  /** A send that will not leave: off the queue, its kept media dropped, ERROR with `reason`. */
  async fail(instance: Instance, row: QueueRow, reason: string): Promise<void> {
    const payload = payloadOf(row);
    this.deps.onOutcome?.(instance, 'error');
    await inUnit(this.deps.db, async (unit) => {
      await removeQueued(unit.tx, row.seq);
      if (payload.outbound.mediaBlobId) await dropMediaBlob(unit.tx, payload.outbound.mediaBlobId);
      await this.deps.statuses.record(unit, instance, payload.outbound.keyId, 'ERROR', reason);
    });
  }
}
