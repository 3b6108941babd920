// Truthful health: notices an "open" connection that has heard nothing from WhatsApp for too long.

export interface WatchdogOptions {
  idleMs: number;
  /** When WhatsApp was last heard (ms since epoch), or null when never. */
  lastHeard(): number | null;
  /** Called once when the silence passes idleMs; the watchdog stops itself first. */
  onIdle(silentMs: number): void;
}

export class IdleWatchdog {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: WatchdogOptions) {}

  start(): void {
    this.stop();
    const every = Math.min(30_000, Math.max(250, Math.floor(this.options.idleMs / 4)));
    this.timer = setInterval(() => this.check(), every);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private check(): void {
    const heard = this.options.lastHeard();
    if (heard === null) return;
    const silent = Date.now() - heard;
    if (silent > this.options.idleMs) {
      this.stop();
      this.options.onIdle(silent);
    }
  }
}
