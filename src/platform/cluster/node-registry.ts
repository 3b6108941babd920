// This node in the store: a fresh incarnation at start, a heartbeat while it runs, stopped at a clean stop; on each
// beat, the incarnations alive are handed to the parts that take over the work of dead ones.
import type { Logger } from '../logger.js';
import type { Db } from '../store/db.js';
import { timeOrderedId } from '../util/time-ordered-id.js';
import { beat, forgetNodesBefore, insertNode, liveIncarnations, markStopped, ownedInstanceCounts, recentNodes, retireEarlierLives } from './node-queries.js';

export interface NodeRegistryOptions {
  db: Db;
  /** NODE_ID: this node's name across restarts. */
  nodeId: string;
  /** NODE_ADDRESS: where the other nodes reach this one. */
  address: string;
  heartbeatMs: number;
  deadAfterMs: number;
  /** The store allows one node only (SQLite, locked at open): every earlier incarnation is over at start. */
  oneNodeStore: boolean;
  logger: Logger;
}

/** A node incarnation as operators see it. */
export interface NodeView {
  incarnation: string;
  nodeId: string;
  /** NODE_ADDRESS: where the other nodes reach it (null for an incarnation registered before addresses were kept). */
  address: string | null;
  /** alive: heartbeat recent; dead: heartbeat older than NODE_DEAD_AFTER_MS; stopped: stopped cleanly (or retired). */
  state: 'alive' | 'dead' | 'stopped';
  /** This node (the one answering). */
  self: boolean;
  startedAt: string;
  heartbeatAt: string;
  stoppedAt: string | null;
  /** How many instances it owns (their connections and sends run there). */
  instances: number;
}

/** Told the live incarnations after each heartbeat (this node's included). */
export type LiveNodesListener = (live: readonly string[]) => Promise<unknown>;

/** Dead and stopped incarnations are kept this long for the operators' view, then forgotten. */
const keepGoneMs = 24 * 3600_000;
/** Gone incarnations are looked for at start, then at most this often (not at every beat). */
const forgetEveryMs = 3600_000;

export class NodeRegistry {
  /** This life of the node: new at every start, written on its claims. */
  readonly incarnation = timeOrderedId();
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: LiveNodesListener[] = [];
  private running: Promise<void> | undefined;
  private retiredWarned = false;
  /** When gone incarnations were last forgotten (undefined: not yet, the first beat does it). */
  private forgotAt: number | undefined;
  /** When this node's heartbeat was last written (0: not yet); the ownership fences itself when it grows old. */
  lastBeatAt = 0;
  /** Another process marked this incarnation stopped: it owns nothing any more (see `lastBeatAt`). */
  retired = false;
  private readonly logger: Logger;

  constructor(private readonly options: NodeRegistryOptions) {
    this.logger = options.logger.child({ component: 'node-registry', nodeId: options.nodeId });
  }

  onLiveNodes(listener: LiveNodesListener): void {
    this.listeners.push(listener);
  }

  /** Registers this incarnation, retires the earlier lives that are certainly over, and starts the heartbeat. */
  async start(): Promise<void> {
    const { db, nodeId, oneNodeStore } = this.options;
    const now = Date.now();
    await insertNode(db, this.incarnation, nodeId, this.options.address, now);
    const retired = await retireEarlierLives(db, this.incarnation, oneNodeStore ? null : nodeId, now);
    if (retired > 0) this.logger.info({ retired }, 'earlier lives of this node marked stopped; their work is taken over now');
    this.logger.info({ incarnation: this.incarnation }, 'node registered');
    await this.tick();
    this.timer = setInterval(() => {
      if (!this.running) this.running = this.tick().finally(() => (this.running = undefined));
    }, this.options.heartbeatMs);
    this.timer.unref();
  }

  /** Stops the heartbeat and marks this incarnation stopped (the other nodes take its work over at once). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    await markStopped(this.options.db, this.incarnation, Date.now()).catch((error: unknown) =>
      this.logger.warn({ err: error }, 'node not marked stopped; the others see it dead once its heartbeat is old'),
    );
  }

  /** The incarnations seen in the last day, newest first, with their state as of now. */
  async view(): Promise<NodeView[]> {
    const now = Date.now();
    const records = await recentNodes(this.options.db, now - keepGoneMs);
    const owned = await ownedInstanceCounts(this.options.db);
    return records.map((record) => ({
      incarnation: record.incarnation,
      nodeId: record.nodeId,
      address: record.address,
      state: record.stoppedAt !== null ? 'stopped' : record.heartbeatAt >= now - this.options.deadAfterMs ? 'alive' : 'dead',
      self: record.incarnation === this.incarnation,
      startedAt: new Date(record.startedAt).toISOString(),
      heartbeatAt: new Date(record.heartbeatAt).toISOString(),
      stoppedAt: record.stoppedAt === null ? null : new Date(record.stoppedAt).toISOString(),
      instances: owned.get(record.incarnation) ?? 0,
    }));
  }

  /**
   * One beat at `now`: the heartbeat written, the live incarnations read and handed on; at the first beat and then
   * hourly, incarnations gone for a day forgotten. Failures are logged, never thrown.
   */
  async tick(now = Date.now()): Promise<void> {
    const { db, deadAfterMs } = this.options;
    try {
      const beaten = await beat(db, this.incarnation, now);
      if (beaten) this.lastBeatAt = now;
      else this.retired = true;
      if (!beaten && !this.retiredWarned) {
        this.retiredWarned = true;
        this.logger.error(
          { incarnation: this.incarnation },
          'this node was marked stopped by another process: two running nodes share one NODE_ID (give each its own)',
        );
      }
      const live = await liveIncarnations(db, now - deadAfterMs);
      if (!live.includes(this.incarnation)) live.push(this.incarnation);
      for (const listener of this.listeners) await listener(live);
      if (this.forgotAt === undefined || now - this.forgotAt >= forgetEveryMs) {
        await forgetNodesBefore(db, now - keepGoneMs);
        this.forgotAt = now;
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'node heartbeat failed; trying again at the next beat');
    }
  }
}
