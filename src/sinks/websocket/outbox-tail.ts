// Reads the outbox on this node from where it stood at start, in seq order, and hands each committed event on.
//
// Every node reads the outbox itself, so a websocket client of any node receives the events every node commits,
// once each and in order, even when the node that wrote one was killed right after its commit.
import { OutboxFeed, type OutboxRow } from '../../events/outbox-feed.js';
import type { Logger } from '../../platform/logger.js';
import type { Db, Dialect } from '../../platform/store/db.js';

export interface OutboxTailOptions {
  db: Db;
  dialect: Dialect;
  logger: Logger;
  deliver(row: OutboxRow): void;
  /** Safety poll when no wake-up comes (default 500 ms). */
  pollMs?: number;
  /** Rows read per round (default 500). */
  batchSize?: number;
}

const retryMs = 1000;

export class OutboxTail {
  private readonly feed: OutboxFeed;
  private readonly pollMs: number;
  private readonly batchSize: number;
  private cursor = 0;
  private stopped = true;
  private woken = false;
  private wakeUp: (() => void) | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly options: OutboxTailOptions) {
    this.feed = new OutboxFeed(options.db, options.dialect, options.logger);
    this.pollMs = options.pollMs ?? 500;
    this.batchSize = options.batchSize ?? 500;
  }

  /** Starts after the newest event committed now (history is not replayed). */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.cursor = await this.feed.head();
    this.stopped = false;
    this.running = this.loop();
  }

  /** Events were committed (on any node): read at once. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.wakeUp?.();
    await this.running;
    this.running = undefined;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let pause: number;
      try {
        pause = await this.round();
      } catch (error) {
        if (this.stopped) break;
        this.options.logger.warn({ err: error, retryInMs: retryMs }, 'reading the outbox for websocket clients failed');
        pause = retryMs;
      }
      if (pause > 0) await this.sleep(pause);
    }
  }

  private async round(): Promise<number> {
    this.woken = false;
    const batch = await this.feed.next(this.cursor, this.batchSize);
    for (const row of batch.rows) {
      if (this.stopped) return 0;
      this.options.deliver(row);
    }
    this.cursor = batch.through;
    if (batch.recheckInMs !== undefined) return batch.recheckInMs;
    return batch.rows.length === this.batchSize ? 0 : this.pollMs;
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }
}
