// Delivery attempts of queued sends: a plain run or one send handed to the connector, and what each outcome becomes.
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { Db } from '../platform/store/db.js';
import { delayFor, type BackoffPolicy } from '../platform/util/backoff.js';
import { TransientConnectorError, type Connector } from '../core/connector.js';
import type { Instance } from '../core/instance.js';
import type { QueuePayload } from './send-queue.js';
import type { SendOutcomes } from './send-outcomes.js';
import { isQueued, scheduleRetry, type QueueRow } from './queue-queries.js';
import { outboundOf, payloadOf, storedMessageOf } from './queued-sends.js';
import { sendAfterTyping, sendInOrder } from './connector-handoff.js';
import type { AttemptRecords } from './attempt-records.js';
import type { PacingGate } from './pacing-gate.js';

export interface SendAttemptDeps {
  db: Db;
  config: Config;
  logger: Logger;
  instanceById(id: string): Instance | undefined;
  connectorOf(id: string): Connector | undefined;
  /** Aborts the typing delay of a send of the instance when its delivery pauses (read as the delay starts). */
  delaySignalOf(instanceId: string): AbortSignal | undefined;
  outcomes?: SendOutcomes;
  /** How long a paced send waited at its instance's pacing gate. */
  onPacingWait?(instance: Instance, waitedMs: number): void;
}

/** How a run went: `advanced`, rows dealt with; `go`, the chat may go on; `marked`, the next run already marked. */
export interface RunResult {
  advanced: number;
  go: boolean;
  marked: QueueRow[];
}

export class SendAttempts {
  /** Waits between attempts of a send the connector could not take for now: doubling, no ceiling, no jitter. */
  private readonly retryBackoff: BackoffPolicy;

  constructor(
    private readonly deps: SendAttemptDeps,
    private readonly records: AttemptRecords,
  ) {
    this.retryBackoff = { initialMs: deps.config.sendRetryBaseMs, maxMs: Infinity, factor: 2, jitter: 0 };
  }

  /**
   * Sends a plain run in order; stops at the first failure. `marked`: the run after it, marked as attempted by the
   * same write that completed this one (unless `premarked`, this run is marked first). So a chat in full flow costs
   * one write per run: the run's `send.message` events are stored before it leaves, its `SERVER_ACK` right after.
   */
  async deliverRun(instanceId: string, rows: QueueRow[], premarked: boolean, following: (sent: number) => QueueRow[]): Promise<RunResult> {
    const instance = this.deps.instanceById(instanceId);
    const connector = this.deps.connectorOf(instanceId);
    if (!instance || !connector || connector.state() !== 'open') return { advanced: 0, go: false, marked: [] };
    if (!premarked) await this.records.markAttemptedAlone(instance, rows);
    const payloads = rows.map(payloadOf);
    const { sent, error: failure } = await sendInOrder(
      connector,
      rows.map((row, i) => outboundOf(payloads[i], storedMessageOf(row)?.content)),
    );
    if (sent === rows.length) {
      const next = following(sent);
      await this.records.complete(instance, rows, payloads, next);
      return { advanced: sent, go: true, marked: next };
    }
    if (sent > 0) await this.records.complete(instance, rows.slice(0, sent), payloads.slice(0, sent), []);
    const go = await this.failed(instance, { ...rows[sent], attempts: 1 }, payloads[sent], 1, failure);
    return { advanced: sent + (go ? 1 : 0), go, marked: [] };
  }

  /**
   * Tries one send, first through the instance's pacing gate when its sends are paced; false when the chat must wait
   * (retry scheduled, connection gone, or the wait at the gate aborted).
   */
  async deliver(instanceId: string, row: QueueRow, gate?: PacingGate): Promise<boolean> {
    const instance = this.deps.instanceById(instanceId);
    const connector = this.deps.connectorOf(instanceId);
    if (!instance || !connector || connector.state() !== 'open') return false;
    if (row.expires_at <= Date.now()) {
      await this.records.failExpired(instance, row);
      return true;
    }
    const signal = this.deps.delaySignalOf(instanceId);
    if (!gate) return this.attempt(instance, connector, row, signal);
    // Nothing is recorded before the gate lets the send through: a wait cut short leaves it queued, unannounced.
    const passage = await gate.enter(row.chat_jid, signal);
    if (!passage) return false;
    try {
      if (connector.state() !== 'open') return false;
      // A long wait: the expiry sweep may have taken the send off the queue meanwhile (it is ERROR then, not sent).
      if (!(await isQueued(this.deps.db, row.seq))) return true;
      this.deps.onPacingWait?.(instance, passage.waitedMs);
      return await this.attempt(instance, connector, row, signal, passage.waitedMs);
    } finally {
      passage.leave();
    }
  }

  /** One attempt: counted (and announced, the first time), the typing delay, the send, its outcome recorded. */
  private async attempt(instance: Instance, connector: Connector, row: QueueRow, signal: AbortSignal | undefined, pacingWaitMs?: number): Promise<boolean> {
    const payload = payloadOf(row);
    const record = storedMessageOf(row);
    await this.records.countAttempt(instance, row, pacingWaitMs);
    const attempt = row.attempts + 1;
    try {
      if (!(await sendAfterTyping(connector, row.chat_jid, outboundOf(payload, record?.content), payload.delay, signal))) return false;
    } catch (error) {
      return this.failed(instance, row, payload, attempt, error);
    }
    await this.records.complete(instance, [row], [payload], []);
    return true;
  }

  /** A failed attempt: a transient failure is retried later (false: the chat waits); anything else is final (true). */
  private async failed(instance: Instance, row: QueueRow, payload: QueuePayload, attempt: number, error: unknown): Promise<boolean> {
    const reason = error instanceof Error ? error.message : String(error);
    if (error instanceof TransientConnectorError && attempt < this.deps.config.sendRetryMaxAttempts) {
      const wait = delayFor(this.retryBackoff, attempt);
      await scheduleRetry(this.deps.db, row.seq, Date.now() + wait, reason.slice(0, 500));
      this.deps.logger.warn({ instance: instance.name, keyId: payload.outbound.keyId, attempt, wait }, 'send failed, will retry');
      this.deps.outcomes?.settle(row.message_id, { kind: 'queued' });
      return false;
    }
    this.deps.logger.warn({ instance: instance.name, keyId: payload.outbound.keyId, attempt }, 'send failed permanently');
    await this.records.fail(instance, row, reason);
    this.deps.outcomes?.settle(row.message_id, { kind: 'refused', error: error instanceof Error ? error : new Error(reason) });
    return true;
  }
}
