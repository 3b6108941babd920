// Delivers queued sends per instance: chats in parallel, each chat in acceptance order, with delay, retries and expiry.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Selectable } from 'kysely';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { Db } from '../platform/store/db.js';
import type { SendQueueTable } from '../platform/store/schema.js';
import { inUnit } from '../platform/store/unit.js';
import { inWriteUnit, type WriteUnit } from '../platform/store/write-unit.js';
import { LaneScheduler } from '../platform/util/lanes.js';
import { yieldToEventLoop } from '../platform/util/yield.js';
import type { ApiPriority } from '../platform/util/api-priority.js';
import { TransientConnectorError, type Connector, type OutboundMessage } from '../core/connector.js';
import type { EventWriter } from '../events/writer.js';
import type { Instance } from '../core/instance.js';
import { eventSourceOf } from '../core/event-envelope.js';
import type { StatusRecorder } from './status-recorder.js';
import { presentMessage, recordFromRow, type MessageRecord } from './records.js';
import type { QueuePayload } from './send-queue.js';
import { queueHeads } from './queue-heads.js';
import type { SendOutcomes } from './send-outcomes.js';

export interface SendWorkerDeps {
  db: Db;
  config: Config;
  logger: Logger;
  events: EventWriter;
  statuses: StatusRecorder;
  instanceById(id: string): Instance | undefined;
  connectorOf(id: string): Connector | undefined;
  apikeyOf(instance: Instance): string;
  /** Told the first attempt's outcome of each send (the API waits on it for synchronous connectors). */
  outcomes?: SendOutcomes;
  onOutcome?(instance: Instance, result: 'delivered' | 'error'): void;
  /** Lets the API go first while it is busy (batches start in rounds, and are smaller). */
  priority?: ApiPriority;
}

const lanesPerInstance = 64;
const rowsPerFetch = 200;
/** Sends sharing the transactions before and after them. */
const maxBatch = 50;
const expirySweepMs = 5_000;
/** Longest run of sends without letting other work in. */
const yieldEveryMs = 2;
/** The worker's bookkeeping goes after the store requests that answer clients (SQLite; see `SqliteThread.run`). */
const background = { background: true };

export class SendWorkers {
  private readonly schedulers = new Map<string, LaneScheduler>();
  /** Per instance: aborts typing delays in progress when its delivery pauses or the service stops. */
  private readonly aborts = new Map<string, AbortController>();
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: SendWorkerDeps) {}

  start(): void {
    const sweep = () => {
      void this.expire().catch((error: unknown) => this.deps.logger.error({ err: error }, 'send expiry sweep failed'));
      this.sweepTimer = setTimeout(sweep, expirySweepMs);
      this.sweepTimer.unref();
    };
    sweep();
  }

  /** The instance's connection is open: deliver its queue. */
  resume(instanceId: string): void {
    let scheduler = this.schedulers.get(instanceId);
    if (!scheduler) {
      scheduler = this.schedulerFor(instanceId);
      this.schedulers.set(instanceId, scheduler);
      this.aborts.set(instanceId, new AbortController());
      scheduler.start();
    } else {
      scheduler.wake();
    }
  }

  /** The instance's connection closed: stop delivering (queued sends wait). */
  async pause(instanceId: string): Promise<void> {
    const scheduler = this.schedulers.get(instanceId);
    this.schedulers.delete(instanceId);
    this.abortDelays(instanceId);
    await scheduler?.stop();
  }

  wake(instanceId: string): void {
    this.schedulers.get(instanceId)?.wake();
  }

  /** A send was queued for `chat`: a chat already being worked picks it up by itself, so no scan of the queue. */
  wakeChat(instanceId: string, chat: string): void {
    this.schedulers.get(instanceId)?.wakeLane(chat);
  }

  async stop(): Promise<void> {
    if (this.sweepTimer) clearTimeout(this.sweepTimer);
    const all = [...this.schedulers.values()];
    this.schedulers.clear();
    for (const id of [...this.aborts.keys()]) this.abortDelays(id);
    await Promise.all(all.map((s) => s.stop()));
  }

  /** A send waiting out its `delay` stays queued (attempted again on resume) instead of holding up a stop. */
  private abortDelays(instanceId: string): void {
    this.aborts.get(instanceId)?.abort();
    this.aborts.delete(instanceId);
  }

  private schedulerFor(instanceId: string): LaneScheduler {
    return new LaneScheduler({
      maxConcurrentLanes: lanesPerInstance,
      pollMs: 1_000,
      onError: (error) => this.deps.logger.error({ err: error, instanceId }, 'send worker failed'),
      listLanes: async () => (await queueHeads(this.deps.db, instanceId)).map((head) => ({ key: head.chat, readyAt: head.readyAt })),
      runLane: (chat) => this.runChat(instanceId, chat),
    });
  }

  /** Sends a chat's queue in order; answers when its head is due if it waits for a retry. */
  private async runChat(instanceId: string, chat: string): Promise<number | undefined> {
    for (;;) {
      const rows = await this.fetchChat(instanceId, chat);
      if (rows.length === 0) return undefined;
      await yieldToEventLoop();
      let next = 0;
      // A batch already marked as attempted (with `send.message`) by the write that completed the one before it.
      let marked: Selectable<SendQueueTable>[] = [];
      while (next < rows.length) {
        // Marked rows left behind are attempted again one by one (as after a crash), never announced twice.
        if (!this.schedulers.has(instanceId)) return undefined;
        if (rows[next].next_attempt_at > Date.now()) return rows[next].next_attempt_at;
        if (this.deps.priority) await this.deps.priority.step();
        const premarked = marked.length > 0;
        const batch = premarked ? marked : this.plainRun(instanceId, rows, next);
        marked = [];
        const following = (sent: number) => (this.schedulers.has(instanceId) ? this.plainRun(instanceId, rows, next + sent) : []);
        const result =
          batch.length > 0
            ? await this.deliverBatch(instanceId, batch, premarked, following)
            : { advanced: 1, go: await this.deliver(instanceId, rows[next]), marked: [] };
        // A retry was scheduled or the connection went: the next look (poll or wake-up) finds when it is due.
        if (!result.go) return undefined;
        next += result.advanced;
        marked = result.marked;
      }
    }
  }

  /** The chat's next queued sends in order, each with its stored message (one read). */
  private async fetchChat(instanceId: string, chat: string): Promise<Selectable<SendQueueTable>[]> {
    const found = await this.deps.db
      .selectFrom('send_queue as q')
      .leftJoin('messages as m', 'm.id', 'q.message_id')
      .selectAll('q')
      .select([
        'm.id as m_id',
        'm.key_id as m_key_id',
        'm.remote_jid as m_remote_jid',
        'm.from_me as m_from_me',
        'm.participant as m_participant',
        'm.push_name as m_push_name',
        'm.message_type as m_message_type',
        'm.content as m_content',
        'm.status as m_status',
        'm.message_timestamp as m_message_timestamp',
        'm.source as m_source',
      ])
      .where('q.instance_id', '=', instanceId)
      .where('q.chat_jid', '=', chat)
      .where('q.state', '=', 'pending')
      .orderBy('q.seq')
      .limit(rowsPerFetch)
      .execute();
    return found.map((joined) => {
      const { m_id, m_key_id, m_remote_jid, m_from_me, m_participant, m_push_name, m_message_type, m_content, m_status, m_message_timestamp, m_source, ...row } = joined;
      // No message row: the instance is being deleted (the connector refuses a send without content).
      if (m_id !== null && m_key_id !== null && m_remote_jid !== null && m_from_me !== null && m_message_type !== null && m_content !== null) {
        storedMessages.set(
          row,
          recordFromRow({
            id: m_id,
            instance_id: instanceId,
            key_id: m_key_id,
            remote_jid: m_remote_jid,
            from_me: m_from_me,
            participant: m_participant,
            push_name: m_push_name,
            message_type: m_message_type,
            content: m_content,
            status: m_status ?? 'PENDING',
            message_timestamp: m_message_timestamp ?? 0,
            source: m_source ?? 'unknown',
          }),
        );
      }
      return row;
    });
  }

  /**
   * The consecutive sends from `start` that need nothing but sending (first attempt, no typing delay, not expired,
   * a connector that does not answer synchronously): they share the writes around the sends.
   */
  private plainRun(instanceId: string, rows: Selectable<SendQueueTable>[], start: number): Selectable<SendQueueTable>[] {
    if (this.deps.connectorOf(instanceId)?.messaging.acknowledgesSynchronously) return [];
    const now = Date.now();
    const run: Selectable<SendQueueTable>[] = [];
    // While the API is busy, a shorter stretch between two turns of request handling.
    const limit = this.deps.priority?.busy() ? Math.min(this.deps.config.sendWorkerBusyBatch, maxBatch) : maxBatch;
    for (let i = start; i < rows.length && run.length < limit; i++) {
      const row = rows[i];
      if (row.attempts !== 0 || row.expires_at <= now || row.next_attempt_at > now) break;
      if (payloadOf(row).delay > 0) break;
      run.push(row);
    }
    return run;
  }

  /**
   * Sends a plain run in order; stops at the first failure. `advanced`: rows dealt with; `go`: the chat may go on;
   * `marked`: the run after it, marked as attempted by the same write that completed this one (unless `premarked`,
   * this run is marked first). So a chat in full flow costs one write per run: the run's `send.message` events are
   * stored before it leaves, its `SERVER_ACK` right after.
   */
  private async deliverBatch(
    instanceId: string,
    rows: Selectable<SendQueueTable>[],
    premarked: boolean,
    following: (sent: number) => Selectable<SendQueueTable>[],
  ): Promise<{ advanced: number; go: boolean; marked: Selectable<SendQueueTable>[] }> {
    const { db } = this.deps;
    const instance = this.deps.instanceById(instanceId);
    const connector = this.deps.connectorOf(instanceId);
    if (!instance || !connector || connector.state() !== 'open') return { advanced: 0, go: false, marked: [] };
    if (!premarked) await inWriteUnit(db, (unit) => this.markAttempted(unit, instance, rows), background);
    const payloads = rows.map(payloadOf);
    const { sent, error: failure } = await sendInOrder(
      connector,
      rows.map((row, i) => outboundOf(payloads[i], storedMessages.get(row)?.content)),
    );
    if (sent === rows.length) {
      const next = following(sent);
      await this.complete(instance, rows, payloads, next);
      return { advanced: sent, go: true, marked: next };
    }
    if (sent > 0) await this.complete(instance, rows.slice(0, sent), payloads.slice(0, sent), []);
    const go = await this.failed(instance, { ...rows[sent], attempts: 1 }, payloads[sent], 1, failure);
    return { advanced: sent + (go ? 1 : 0), go, marked: [] };
  }

  /** First attempt of a run: counted, and announced with `send.message` (retries are the same message leaving again). */
  private markAttempted(unit: WriteUnit, instance: Instance, rows: Selectable<SendQueueTable>[]): void {
    const { db } = this.deps;
    unit.write(db.updateTable('send_queue').set({ attempts: 1 }).where('seq', 'in', rows.map((r) => r.seq)));
    const source = eventSourceOf(instance, this.deps.apikeyOf);
    for (const row of rows) {
      const record = storedMessages.get(row);
      if (!record) continue;
      this.fillSender(unit, instance, record);
      this.deps.events.emit(unit, source, 'SEND_MESSAGE', presentMessage(record));
    }
  }

  /**
   * A status posted before its instance was linked was stored without its poster (`participant: ""`): it leaves as the
   * account it is sent from, so the record and its events name it from here on.
   */
  private fillSender(unit: WriteUnit, instance: Instance, record: MessageRecord): void {
    if (record.participant !== '' || !instance.ownerJid) return;
    record.participant = instance.ownerJid;
    if (!record.pushName && instance.profileName) record.pushName = instance.profileName;
    unit.write(this.deps.db.updateTable('messages').set({ participant: record.participant, push_name: record.pushName }).where('id', '=', record.id));
  }

  /**
   * Records sent messages in one write: off the queue, their kept media dropped, SERVER_ACK; and `upcoming`, the
   * chat's next run, marked as attempted in the same write.
   */
  private async complete(instance: Instance, rows: Selectable<SendQueueTable>[], payloads: QueuePayload[], upcoming: Selectable<SendQueueTable>[]): Promise<void> {
    const { db } = this.deps;
    await inWriteUnit(db, (unit) => {
      unit.write(db.deleteFrom('send_queue').where('seq', 'in', rows.map((r) => r.seq)));
      const blobs = payloads.map((p) => p.outbound.mediaBlobId).filter((id): id is string => !!id);
      if (blobs.length > 0) unit.write(db.deleteFrom('media_blobs').where('id', 'in', blobs));
      const sent = rows.map((row) => storedMessages.get(row)).filter((record): record is MessageRecord => !!record);
      this.deps.statuses.markSent(unit, instance, sent);
      if (upcoming.length > 0) this.markAttempted(unit, instance, upcoming);
    }, background);
    for (const row of rows) this.deps.outcomes?.settle(row.message_id, { kind: 'sent' });
    for (let i = 0; i < rows.length; i++) this.deps.onOutcome?.(instance, 'delivered');
  }

  /** Tries one send; false when the chat must wait (retry scheduled or connection gone). */
  private async deliver(instanceId: string, row: Selectable<SendQueueTable>): Promise<boolean> {
    const { db } = this.deps;
    const instance = this.deps.instanceById(instanceId);
    const connector = this.deps.connectorOf(instanceId);
    if (!instance || !connector || connector.state() !== 'open') return false;
    if (row.expires_at <= Date.now()) {
      await this.fail(instance, row, 'the send expired before the instance could deliver it');
      return true;
    }
    const payload = payloadOf(row);
    const record = storedMessages.get(row);
    await inWriteUnit(db, (unit) => {
      unit.write(db.updateTable('send_queue').set({ attempts: row.attempts + 1 }).where('seq', '=', row.seq));
      // send.message announces the first attempt only; retries are the same message leaving again.
      if (record && row.attempts === 0) {
        this.fillSender(unit, instance, record);
        this.deps.events.emit(unit, eventSourceOf(instance, this.deps.apikeyOf), 'SEND_MESSAGE', presentMessage(record));
      }
    });
    const attempt = row.attempts + 1;
    const signal = this.aborts.get(instanceId)?.signal;
    try {
      if (payload.delay > 0) {
        await connector.presence?.sendPresence(row.chat_jid, 'composing');
        try {
          await sleep(payload.delay, undefined, { signal });
        } catch (error) {
          if (signal?.aborted) return false;
          throw error;
        }
        // As Evolution and WhatsApp clients do: typing ends, then the message goes.
        await connector.presence?.sendPresence(row.chat_jid, 'paused');
      }
      await connector.messaging.send(outboundOf(payload, record?.content));
    } catch (error) {
      return this.failed(instance, row, payload, attempt, error);
    }
    await this.complete(instance, [row], [payload], []);
    return true;
  }

  /** A failed attempt: a transient failure is retried later (false: the chat waits); anything else is final (true). */
  private async failed(instance: Instance, row: Selectable<SendQueueTable>, payload: QueuePayload, attempt: number, error: unknown): Promise<boolean> {
    const reason = error instanceof Error ? error.message : String(error);
    if (error instanceof TransientConnectorError && attempt < this.deps.config.sendRetryMaxAttempts) {
      const wait = this.deps.config.sendRetryBaseMs * 2 ** (attempt - 1);
      await this.deps.db
        .updateTable('send_queue')
        .set({ next_attempt_at: Date.now() + wait, last_error: reason.slice(0, 500) })
        .where('seq', '=', row.seq)
        .execute();
      this.deps.logger.warn({ instance: instance.name, keyId: payload.outbound.keyId, attempt, wait }, 'send failed, will retry');
      this.deps.outcomes?.settle(row.message_id, { kind: 'queued' });
      return false;
    }
    this.deps.logger.warn({ instance: instance.name, keyId: payload.outbound.keyId, attempt }, 'send failed permanently');
    await this.fail(instance, row, reason);
    this.deps.outcomes?.settle(row.message_id, { kind: 'refused', error: error instanceof Error ? error : new Error(reason) });
    return true;
  }

  private async fail(instance: Instance, row: Selectable<SendQueueTable>, reason: string): Promise<void> {
    const payload = payloadOf(row);
    this.deps.onOutcome?.(instance, 'error');
    await inUnit(this.deps.db, async (unit) => {
      await unit.tx.deleteFrom('send_queue').where('seq', '=', row.seq).execute();
      if (payload.outbound.mediaBlobId) await unit.tx.deleteFrom('media_blobs').where('id', '=', payload.outbound.mediaBlobId).execute();
      await this.deps.statuses.record(unit, instance, payload.outbound.keyId, 'ERROR', reason);
    });
  }

  /** Sends that waited past their expiry (e.g. the instance never linked) become ERROR. */
  async expire(): Promise<number> {
    const rows = await this.deps.db
      .selectFrom('send_queue')
      .selectAll()
      .where('state', '=', 'pending')
      .where('expires_at', '<=', Date.now())
      // The order of send_queue_expiry, so the sweep reads only what expired.
      .orderBy('expires_at')
      .orderBy('seq')
      .limit(500)
      .execute();
    for (const row of rows) {
      const instance = this.deps.instanceById(row.instance_id);
      if (!instance) {
        await this.deps.db.deleteFrom('send_queue').where('seq', '=', row.seq).execute();
        continue;
      }
      await this.fail(instance, row, 'the send expired before the instance could deliver it');
    }
    return rows.length;
  }
}

/**
 * Hands a chat's messages to the connector in order: all at once where it can take them so (`sendMany`), else one
 * after the other, letting other work in every few ms. Stops at the first failure.
 */
async function sendInOrder(connector: Connector, messages: OutboundMessage[]): Promise<{ sent: number; error?: unknown }> {
  if (connector.messaging.sendMany) return connector.messaging.sendMany(messages);
  let lastYield = performance.now();
  for (let sent = 0; sent < messages.length; sent++) {
    // Requests and deliveries waiting on I/O get their turn (p99 of the API, webhook lag).
    if (performance.now() - lastYield >= yieldEveryMs) {
      await yieldToEventLoop();
      lastYield = performance.now();
    }
    try {
      await connector.messaging.send(messages[sent]);
    } catch (error) {
      return { sent, error };
    }
  }
  return { sent: messages.length };
}

/** The message to hand the connector: the queue entry's routing with the stored message's content. */
function outboundOf(payload: QueuePayload, content: Record<string, unknown> | undefined): OutboundMessage {
  // A queue entry whose message row is gone (instance deleted meanwhile) cannot be sent: the connector refuses it.
  return { ...payload.outbound, content: content ?? {} };
}

const parsedPayloads = new WeakMap<Selectable<SendQueueTable>, QueuePayload>();
/** The stored message of each fetched queue row (read with it). */
const storedMessages = new WeakMap<Selectable<SendQueueTable>, MessageRecord>();

/** A queue row's payload, parsed once per fetched row (the batch check and the send both read it). */
function payloadOf(row: Selectable<SendQueueTable>): QueuePayload {
  let payload = parsedPayloads.get(row);
  if (!payload) {
    payload = JSON.parse(row.payload) as QueuePayload;
    parsedPayloads.set(row, payload);
  }
  return payload;
}
