// Delivers queued sends per instance: chats in parallel, each chat in acceptance order, with delay, retries and expiry.
import { LaneScheduler } from '../platform/util/lanes.js';
import { yieldToEventLoop } from '../platform/util/yield.js';
import type { ApiPriority } from '../platform/util/api-priority.js';
import { instancesWithPendingSends, pendingAmong, queueHeads } from './queue-heads.js';
import { TurnBatch } from '../platform/util/turn-batch.js';
import { expiredSends, pendingSendsOfChat, removeQueued, type QueueRow } from './queue-queries.js';
import { payloadOf, queueRowsOf } from './queued-sends.js';
import { AttemptRecords, type AttemptRecordDeps } from './attempt-records.js';
import { SendAttempts, type SendAttemptDeps } from './send-attempts.js';
import { PacedSends, type PacedSendDeps } from './paced-sends.js';

export interface SendWorkerDeps extends AttemptRecordDeps, Omit<SendAttemptDeps, 'delaySignalOf'>, PacedSendDeps {
  /** Lets the API go first while it is busy (batches start in rounds, and are smaller). */
  priority?: ApiPriority;
  /** Whether this node owns the instance: only the owner expires its sends (absent: every instance). */
  ownsLocally?(instanceId: string): boolean;
}

const lanesPerInstance = 64;
const rowsPerFetch = 200;
/** Sends sharing the transactions before and after them. */
const maxBatch = 50;
const expirySweepMs = 5_000;
const expiredPerSweep = 500;

export class SendWorkers {
  private readonly schedulers = new Map<string, LaneScheduler>();
  /** Per delivering instance (made at its first delay): aborts typing delays in progress when its delivery pauses or the service stops. */
  private readonly aborts = new Map<string, AbortController>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private readonly records: AttemptRecords;
  private readonly attempts: SendAttempts;
  private readonly paced: PacedSends;
  /** Instances resumed in one turn (many opening at once): one query says which have sends waiting. */
  private readonly resumeChecks = new TurnBatch<string, boolean>(async (ids) => {
    const pending = await pendingAmong(this.deps.db, ids);
    return ids.map((id) => pending.has(id));
  });

  constructor(private readonly deps: SendWorkerDeps) {
    this.paced = new PacedSends(deps);
    this.records = new AttemptRecords(deps);
    this.attempts = new SendAttempts({ ...deps, delaySignalOf: (instanceId) => this.delaySignalOf(instanceId) }, this.records);
  }

  start(): void {
    const sweep = () => {
      void this.expire().catch((error: unknown) => this.deps.logger.error({ err: error }, 'send expiry sweep failed'));
      this.paced.sweep();
      this.sweepTimer = setTimeout(sweep, expirySweepMs);
      this.sweepTimer.unref();
    };
    sweep();
    const poll = () => {
      void this.poll()
        .catch((error: unknown) => this.deps.logger.error({ err: error }, 'send worker poll failed'))
        .finally(() => {
          if (this.pollTimer === undefined) return; // Stopped meanwhile.
          this.pollTimer = setTimeout(poll, this.deps.config.sendWorkerPollMs);
          this.pollTimer.unref();
        });
    };
    this.pollTimer = setTimeout(poll, this.deps.config.sendWorkerPollMs);
    this.pollTimer.unref();
  }

  /**
   * The safety poll, one for every instance delivering here (not one each: a node with 10,000 open instances made
   * 10,000 queries a second): the workers of instances with pending sends look into their queue, which finds what a
   * lost wake-up missed (sends accepted on another node, for one).
   */
  private async poll(): Promise<void> {
    if (this.schedulers.size === 0) return;
    for (const instanceId of await instancesWithPendingSends(this.deps.db)) this.schedulers.get(instanceId)?.wake();
  }

  /** The instance's connection is open: deliver its queue. */
  resume(instanceId: string): void {
    const running = this.schedulers.get(instanceId);
    if (running) {
      running.wake();
      return;
    }
    const scheduler = this.schedulerFor(instanceId);
    this.schedulers.set(instanceId, scheduler);
    // Sends queued from now on wake it; those already queued are found by a check shared with other instances resumed now.
    scheduler.start(false);
    const look = () => this.schedulers.get(instanceId)?.wake();
    this.resumeChecks.call(instanceId).then((pending) => pending && look(), look);
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
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    const all = [...this.schedulers.values()];
    this.schedulers.clear();
    for (const id of [...this.aborts.keys()]) this.abortDelays(id);
    await Promise.all(all.map((s) => s.stop()));
  }

  /** What aborts the instance's typing delays while it delivers; none when it does not. */
  private delaySignalOf(instanceId: string): AbortSignal | undefined {
    if (!this.schedulers.has(instanceId)) return undefined;
    let controller = this.aborts.get(instanceId);
    if (!controller) {
      controller = new AbortController();
      this.aborts.set(instanceId, controller);
    }
    return controller.signal;
  }

  /** A send waiting out its `delay` stays queued (attempted again on resume) instead of holding up a stop. */
  private abortDelays(instanceId: string): void {
    this.aborts.get(instanceId)?.abort();
    this.aborts.delete(instanceId);
  }

  private schedulerFor(instanceId: string): LaneScheduler {
    return new LaneScheduler({
      maxConcurrentLanes: lanesPerInstance,
      // No poll of its own: `poll` looks for every instance at once.
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
      let marked: QueueRow[] = [];
      while (next < rows.length) {
        // Marked rows left behind are attempted again one by one (as after a crash), never announced twice.
        if (!this.schedulers.has(instanceId)) return undefined;
        if (rows[next].next_attempt_at > Date.now()) return rows[next].next_attempt_at;
        if (this.deps.priority) await this.deps.priority.step();
        // A paced instance's sends pass its pacing gate one by one (a run already marked leaves as marked).
        const gate = this.paced.gateFor(instanceId);
        const premarked = marked.length > 0;
        const batch = premarked ? marked : gate ? [] : this.plainRun(instanceId, rows, next);
        marked = [];
        const following = (sent: number) =>
          this.schedulers.has(instanceId) && !this.paced.gateFor(instanceId) ? this.plainRun(instanceId, rows, next + sent) : [];
        const result =
          batch.length > 0
            ? await this.attempts.deliverRun(instanceId, batch, premarked, following)
            : { advanced: 1, go: await this.attempts.deliver(instanceId, rows[next], gate), marked: [] };
        // A retry was scheduled or the connection went: the next look (poll or wake-up) finds when it is due.
        if (!result.go) return undefined;
        next += result.advanced;
        marked = result.marked;
      }
    }
  }

  /** The chat's next queued sends in order, each with its stored message (one read). */
  private async fetchChat(instanceId: string, chat: string): Promise<QueueRow[]> {
    return queueRowsOf(instanceId, await pendingSendsOfChat(this.deps.db, instanceId, chat, rowsPerFetch));
  }

  /**
   * The consecutive sends from `start` that need nothing but sending (first attempt, no typing delay, not expired,
   * a connector that does not answer synchronously): they share the writes around the sends.
   */
  private plainRun(instanceId: string, rows: QueueRow[], start: number): QueueRow[] {
    if (this.deps.connectorOf(instanceId)?.messaging.acknowledgesSynchronously) return [];
    const now = Date.now();
    const run: QueueRow[] = [];
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

  /** Sends that waited past their expiry (e.g. the instance never linked) become ERROR. */
  async expire(): Promise<number> {
    const rows = await expiredSends(this.deps.db, Date.now(), expiredPerSweep);
    for (const row of rows) {
      if (this.deps.ownsLocally && !this.deps.ownsLocally(row.instance_id)) continue;
      const instance = this.deps.instanceById(row.instance_id);
      if (!instance) {
        await removeQueued(this.deps.db, row.seq);
        continue;
      }
      await this.records.failExpired(instance, row);
    }
    return rows.length;
  }
}
