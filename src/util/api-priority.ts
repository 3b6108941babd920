// API first: while requests keep arriving, background work (the send worker) starts one step every few event-loop turns.
import { performance } from 'node:perf_hooks';

export interface ApiPriorityOptions {
  /** The API counts as busy for this long after a request arrived (ms). */
  busyWindowMs: number;
  /**
   * Turns of the event loop between two background steps while the API is busy (1: a step every turn). A turn is
   * counted by a timer (at least 1 ms, with a pass through I/O before it fires), so a loop waiting on the database
   * sleeps instead of spinning through empty turns.
   */
  turnsPerStep: number;
}

/**
 * A burst of sends is answered at the API's full speed and delivered from the queue: the worker's steps wait for a
 * turn of their own, so requests read in a turn are handled before the next step, and the queue drains at full speed
 * once the burst is over. Background work is never starved: it gets a step every `turnsPerStep` turns.
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

  /** Resolves when background work may take its next step: at once while the API is quiet. */
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
      if (this.turns >= this.options.turnsPerStep || !this.busy()) {
        this.turns = 0;
        this.waiting.shift()?.();
      }
      if (this.waiting.length > 0) this.tick();
    }, 0);
  }
}
