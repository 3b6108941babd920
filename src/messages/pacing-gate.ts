// One instance's pacing gate: its paced sends pass one at a time, each after the rate window, a random gap and, in a
// chat never written to, an extra delay. State is in memory (a restart starts the gate afresh).
import { setTimeout as sleep } from 'node:timers/promises';
import { pacingLimits, type Pacing } from '../core/pacing.js';

/** The time the gate reads and waits on (the tests drive their own). */
export interface PacingClock {
  now(): number;
  /** Resolves after `ms`; rejects when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: PacingClock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleep(ms, undefined, { signal }),
};

export interface PacingGateOptions {
  /** The pacing in effect, read at each passage (a settings change applies to the next message). */
  pacing(): Pacing;
  /** Whether the instance has sent a message to `chat` before (asked once per chat; known chats are remembered). */
  hasWrittenTo(chat: string): Promise<boolean>;
  clock: PacingClock;
  /** Uniform in [0, 1): draws the gaps. */
  random: () => number;
}

/** A send let through: it holds the gate until `leave` (called once the send was handed over, or failed). */
export interface Passage {
  /** From asking to passing: the wait the pacing caused (the queue of paced sends before it included). */
  waitedMs: number;
  leave(): void;
}

const windowMs = 60_000;
/** Chats remembered as written to; past this the memory starts over (and asks the store again). */
const knownChatsKept = 10_000;

export class PacingGate {
  /** Resolves when the send holding the gate leaves it. */
  private tail: Promise<void> = Promise.resolve();
  /** When the last messages passed, oldest first (at most the largest maxPerMinute). */
  private readonly passed: number[] = [];
  /** When the last send left the gate (the gap counts from here); none yet: no gap to keep. */
  private lastLeftAt = Number.NEGATIVE_INFINITY;
  private readonly knownChats = new Set<string>();

  constructor(private readonly options: PacingGateOptions) {}

  /**
   * Waits for the send's turn to `chat`; undefined when `signal` aborted the wait (nothing passed: the send stays
   * queued). The answer must be left (`leave`) for the next send to pass.
   */
  async enter(chat: string, signal?: AbortSignal): Promise<Passage | undefined> {
    const { clock } = this.options;
    const askedAt = clock.now();
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    let passed = false;
    try {
      const firstInChat = !(await this.writtenTo(chat));
      await previous;
      if (signal?.aborted) return undefined;
      const readyAt = this.readyAt(firstInChat);
      const wait = readyAt - clock.now();
      if (wait > 0) await clock.sleep(wait, signal);
      const now = clock.now();
      this.recordPassage(now);
      this.remember(chat);
      passed = true;
      let left = false;
      return {
        waitedMs: Math.max(0, now - askedAt),
        leave: () => {
          if (left) return;
          left = true;
          this.lastLeftAt = clock.now();
          release();
        },
      };
    } catch (error) {
      if (signal?.aborted) return undefined;
      throw error;
    } finally {
      if (!passed) release();
    }
  }

  /** When the next send may pass: the rate window and the gap after the last one, then a new chat's extra delay. */
  private readyAt(firstInChat: boolean): number {
    const pacing = this.options.pacing();
    const now = this.options.clock.now();
    if (!pacing.enabled) return now;
    let readyAt = now;
    // The window is full: the next one passes when the oldest of the last `maxPerMinute` is a minute old.
    if (this.passed.length >= pacing.maxPerMinute) {
      readyAt = Math.max(readyAt, this.passed[this.passed.length - pacing.maxPerMinute] + windowMs);
    }
    readyAt = Math.max(readyAt, this.lastLeftAt + this.gap(pacing));
    if (firstInChat) readyAt += pacing.newChatDelayMs;
    return readyAt;
  }

  /** A whole number of ms drawn uniformly in [minGapMs, maxGapMs]. */
  private gap(pacing: Pacing): number {
    const span = pacing.maxGapMs - pacing.minGapMs;
    return pacing.minGapMs + Math.min(span, Math.floor(this.options.random() * (span + 1)));
  }

  private recordPassage(at: number): void {
    this.passed.push(at);
    // Enough to answer the largest window allowed.
    if (this.passed.length > pacingLimits.maxPerMinute.max) this.passed.shift();
  }

  private async writtenTo(chat: string): Promise<boolean> {
    if (this.knownChats.has(chat)) return true;
    const written = await this.options.hasWrittenTo(chat);
    if (written) this.remember(chat);
    return written;
  }

  private remember(chat: string): void {
    if (this.knownChats.size >= knownChatsKept) this.knownChats.clear();
    this.knownChats.add(chat);
  }
}
