// Runs ordered lanes of work concurrently: one runner per lane at a time, lanes polled from the store and woken on demand.

interface LaneHead {
  /** Identifies the lane (a chat, a webhook destination). */
  key: string;
  /** When the lane's first item may run (epoch ms). */
  readyAt: number;
}

export interface LaneSchedulerOptions {
  /** Lists lanes that have work, with the time their head item becomes ready. */
  listLanes(): Promise<LaneHead[]>;
  /**
   * Works through a lane in order until it is empty or its head must wait; answers when that head is due (epoch ms),
   * if it knows, so the lane runs again then.
   */
  runLane(key: string): Promise<number | undefined>;
  maxConcurrentLanes: number;
  /**
   * Safety poll interval: work written by other nodes or missed wake-ups are found within this time. Absent: the
   * scheduler looks only when woken (and when a waiting lane's head is due); its owner polls for it.
   */
  pollMs?: number;
  onError(error: unknown): void;
}

export class LaneScheduler {
  private readonly busy = new Set<string>();
  /** Busy lanes woken while running: their runner may have looked before the new work was there. */
  private readonly wokenWhileBusy = new Set<string>();
  /** A scan left ready lanes waiting for a free runner. */
  private deferred = false;
  /** Lanes whose head waits for a retry, each woken when it is due. */
  private readonly dueTimers = new Map<string, NodeJS.Timeout>();
  private timer: NodeJS.Timeout | undefined;
  private scanning = false;
  private rescan = false;
  private stopped = false;
  private readonly idle: (() => void)[] = [];
  private scanDone: Promise<void> = Promise.resolve();

  constructor(private readonly options: LaneSchedulerOptions) {}

  /** Starts taking work; `lookNow: false` when its owner knows there is none yet (it wakes the scheduler when there is). */
  start(lookNow = true): void {
    this.stopped = false;
    if (lookNow) this.wake();
  }

  /** Looks for work now (coalesces bursts of wake-ups into one scan). */
  wake(): void {
    if (this.stopped) return;
    if (this.scanning) {
      this.rescan = true;
      return;
    }
    this.scanning = true;
    this.scanDone = new Promise((resolve) => setImmediate(() => void this.scan().finally(resolve)));
  }

  /** Work arrived for one lane: it runs now (or after its current run), without a scan of every lane. */
  wakeLane(key: string): void {
    if (this.stopped) return;
    if (this.busy.has(key)) this.wokenWhileBusy.add(key);
    else if (this.busy.size < this.options.maxConcurrentLanes) this.launch(key);
    else this.wake();
  }

  /**
   * The lane's runner has looked at everything queued for it up to now (its last read began after the last wake-up):
   * wake-ups that came while it ran need no run of their own.
   */
  seen(key: string): void {
    this.wokenWhileBusy.delete(key);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const timer of this.dueTimers.values()) clearTimeout(timer);
    this.dueTimers.clear();
    // A scan in flight queries the store: let it finish before the caller closes the store.
    await this.scanDone;
    if (this.busy.size === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private async scan(): Promise<void> {
    let nextDue = this.options.pollMs !== undefined ? Date.now() + this.options.pollMs : Number.POSITIVE_INFINITY;
    try {
      do {
        this.rescan = false;
        const lanes = await this.options.listLanes();
        const now = Date.now();
        for (const lane of lanes) {
          if (this.stopped) break;
          if (this.busy.has(lane.key)) continue;
          if (lane.readyAt > now) {
            nextDue = Math.min(nextDue, lane.readyAt);
            continue;
          }
          if (this.busy.size >= this.options.maxConcurrentLanes) {
            this.deferred = true;
            nextDue = Math.min(nextDue, now + 5);
            break;
          }
          this.launch(lane.key);
        }
      } while (this.rescan && !this.stopped);
    } catch (error) {
      this.options.onError(error);
      nextDue = Math.min(nextDue, Date.now() + 500);
    } finally {
      this.scanning = false;
    }
    if (!this.stopped) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      if (Number.isFinite(nextDue)) {
        this.timer = setTimeout(() => this.wake(), Math.max(0, nextDue - Date.now()));
        this.timer.unref();
      }
    }
  }

  private launch(key: string): void {
    this.busy.add(key);
    const due = this.dueTimers.get(key);
    if (due) {
      clearTimeout(due);
      this.dueTimers.delete(key);
    }
    this.options
      .runLane(key)
      .then(
        (readyAt) => {
          if (typeof readyAt === 'number' && !this.stopped) this.wakeWhenDue(key, readyAt);
        },
        (error: unknown) => this.options.onError(error),
      )
      .finally(() => {
        this.busy.delete(key);
        if (this.stopped) {
          if (this.busy.size === 0) for (const resolve of this.idle.splice(0)) resolve();
          return;
        }
        if (this.wokenWhileBusy.delete(key)) this.launch(key);
        else if (this.deferred) {
          // A runner is free now: lanes a scan could not start get their turn.
          this.deferred = false;
          this.wake();
        }
      });
  }

  private wakeWhenDue(key: string, readyAt: number): void {
    const timer = setTimeout(
      () => {
        this.dueTimers.delete(key);
        this.wakeLane(key);
      },
      Math.max(0, readyAt - Date.now()),
    );
    timer.unref();
    this.dueTimers.set(key, timer);
  }
}
