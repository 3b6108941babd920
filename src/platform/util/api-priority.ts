// API first: while requests keep arriving, background work (the send worker) starts its steps every few event-loop turns.
import { performance } from 'node:perf_hooks';

export interface ApiPriorityOptions {
  /** The API counts as busy for this long after a request arrived (ms). */
  busyWindowMs: number;
  /**
   * Turns of the event loop between two rounds of background steps while the API is busy (1: every turn). A turn is
   * counted by a timer (at least 1 ms, with a pass through I/O before it fires), so a loop waiting on the database
   * sleeps instead of spinning through empty turns.
   */
  turnsPerRound: number;
}

/**
 * A burst of sends is answered at the API's full speed and delivered from the queue: the worker's steps wait for a
 * turn of their own, so requests read in the turns between are handled first, and the queue drains at full speed
 * once the burst is over. Every step waiting when its round comes starts (each chat's next batch), so many chats
 * are not held back one by one, and background work is never starved: a round every `turnsPerRound` turns.
 */
export class ApiPriority {
  private lastRequestAt = Number.NEGATIVE_INFINITY;
  private readonly waiting: (() => void)[] = [];
  private ticking = false;
  private turns = 0;

  constructor(private readonly options: ApiPriorityOptions) {}

  /** An API request arrived. */
  noteRequest(): void {
    this.lastRequestAt = performance.now();
  }

  busy(): boolean {
    return performance.now() - this.lastRequestAt < this.options.busyWindowMs;
  }

  /** Resolves when background work may take its next step: at once while the API is quiet, else at the next round. */
  step(): Promise<void> {
    if (!this.busy() && this.waiting.length === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      this.tick();
    });
  }

  private tick(): void {
    if (this.ticking) return;
    this.ticking = true;
    setTimeout(() => {
      this.ticking = false;
      this.turns += 1;
      if (this.turns >= this.options.turnsPerRound || !this.busy()) {
        this.turns = 0;
        for (const release of this.waiting.splice(0)) release();
      }
      if (this.waiting.length > 0) this.tick();
    }, 0);
  }
}
