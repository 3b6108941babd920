// A clock the test moves by hand, for the pacing gate: time stands still until `advance`, sleepers wake in order.
import type { PacingClock } from '../../src/messages/pacing-gate.js';

interface Sleeper {
  until: number;
  wake(): void;
}

export class ManualClock implements PacingClock {
  private time: number;
  private readonly sleepers = new Set<Sleeper>();

  constructor(start = 1_000_000) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const sleeper: Sleeper = {
        until: this.time + ms,
        wake: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.sleepers.delete(sleeper);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.add(sleeper);
    });
  }

  /** How many waits are under way. */
  get sleeping(): number {
    return this.sleepers.size;
  }

  /** How long until the first sleeper wakes (undefined: nobody sleeps). */
  nextWakeIn(): number | undefined {
    let first: number | undefined;
    for (const s of this.sleepers) first = first === undefined ? s.until : Math.min(first, s.until);
    return first === undefined ? undefined : first - this.time;
  }

  /** Moves time on by `ms`, waking every sleeper due by then. */
  advance(ms: number): void {
    this.time += ms;
    for (const sleeper of [...this.sleepers].sort((a, b) => a.until - b.until)) {
      if (sleeper.until > this.time) continue;
      this.sleepers.delete(sleeper);
      sleeper.wake();
    }
  }
}

/** A seeded generator uniform in [0, 1) (mulberry32), for gaps the test can repeat. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
