// Accepting sends: message, status history and queue entry stored together (group-committed) before the 201.
import type { Db } from '../platform/store/db.js';
import { GroupCommit } from '../platform/store/group-commit.js';
import { inInsertUnit, type InsertUnit } from '../platform/store/unit.js';
import { isPostgres } from '../platform/store/is-postgres.js';
import type { OutboundMessage } from '../core/connector.js';
import { rowFromRecord, type MessageRecord } from './records.js';
import type { StoredMessageHook } from './stored-message-hook.js';

/** What the worker needs to deliver a queued send (the content itself is read from the stored message). */
export interface QueuePayload {
  outbound: Omit<OutboundMessage, 'content'>;
  delay: number;
}

export interface SendDraft {
  record: MessageRecord;
  payload: QueuePayload;
  idempotencyKey?: string;
  requestHash?: string;
  /** Plaintext media kept for connectors that upload at send time (`payload.outbound.mediaBlobId`). */
  mediaBlob?: Buffer;
}

export class SendQueue {
  private readonly commits: GroupCommit<InsertUnit>;

  constructor(
    db: Db,
    private readonly expireAfterMs: number,
    private readonly wake: (instanceId: string, chatJid: string) => void,
    /** What is kept with each accepted send in its unit (chats, contacts). */
    private readonly alongside?: StoredMessageHook,
  ) {
    // Accepting only inserts rows: on PostgreSQL a whole batch is one statement (one round trip). On SQLite the next
    // batch is sent while one is being written (two in flight): the SQLite thread runs them in the order sent, so they
    // still commit in order, and the event loop does not wait for each one before sending the next. More in flight
    // makes each batch smaller, and SQLite writes every page a commit touches whole: four measured 25-30 % fewer
    // sends accepted than two on a fast machine (bench/RESULTS.md, session 7).
    this.commits = new GroupCommit(db, inInsertUnit, 256, isPostgres(db) ? 1 : 2);
  }

  /** Stores the send; resolves once it is committed (concurrent sends share one transaction). */
  accept(draft: SendDraft): Promise<void> {
    const waiting = this.alongside?.ready(draft.record.instanceId);
    if (waiting) return waiting.then(() => this.commits.run((unit) => this.write(unit, draft)));
    return this.commits.run((unit) => this.write(unit, draft));
  }

  private write(unit: InsertUnit, draft: SendDraft): void {
    const { record } = draft;
    const now = Date.now();
    if (draft.mediaBlob && draft.payload.outbound.mediaBlobId) {
      unit.insert('media_blobs', { id: draft.payload.outbound.mediaBlobId, instance_id: record.instanceId, data: draft.mediaBlob, created_at: now });
    }
    unit.insert('messages', rowFromRecord(record, { idempotencyKey: draft.idempotencyKey, requestHash: draft.requestHash }));
    // The history starts with the message row itself (PENDING at created_at); each later status adds a row.
    unit.insert('send_queue', {
      instance_id: record.instanceId,
      message_id: record.id,
      chat_jid: record.remoteJid,
      payload: JSON.stringify(draft.payload),
      state: 'pending',
      attempts: 0,
      next_attempt_at: now,
      expires_at: now + this.expireAfterMs,
      last_error: null,
      created_at: now,
    });
    this.alongside?.stored(unit, record, unit);
    unit.afterCommit(() => this.wake(record.instanceId, record.remoteJid));
  }
}
