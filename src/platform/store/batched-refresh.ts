// Re-reads what other units changed, by id, in batches: ids told within a few milliseconds are read back together.
import type { StoreSignals } from './signals.js';

export interface BatchedRefreshOptions {
  /**
   * Reads these ids back from the store (rows gone: forgotten); `all`: everything (after signals may have been missed).
   * Answers the ids whose read-back raced a change made here and was not applied: they are read again.
   */
  read(ids: string[] | 'all'): Promise<readonly string[]>;
  /** How long ids are gathered before one read (a burst of changes costs one read, not one each). */
  windowMs?: number;
  onError(error: unknown): void;
}

const retryMs = 1_000;

/**
 * Gathers changed ids and reads them back, one read at a time: an id changed again while a read runs is read once
 * more after it, so the last read of an id always began after its last change was told.
 */
class BatchedRefresh {
  private readonly dirty = new Set<string>();
  private everything = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(private readonly options: BatchedRefreshOptions) {}

  /** The row of `id` changed: read it back soon. */
  changed(id: string): void {
    if (this.stopped) return;
    this.dirty.add(id);
    this.schedule();
  }

  /** Anything may have changed (signals were missed): read everything back soon. */
  changedAll(): void {
    if (this.stopped) return;
    this.everything = true;
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.dirty.clear();
  }

  private pending(): boolean {
    return this.everything || this.dirty.size > 0;
  }

  private schedule(waitMs = this.options.windowMs ?? 5): void {
    if (this.timer || this.running) return;
    this.timer = setTimeout(() => this.flush(), waitMs);
    this.timer.unref();
  }

  private flush(): void {
    this.timer = undefined;
    const ids: string[] | 'all' = this.everything ? 'all' : [...this.dirty];
    this.everything = false;
    this.dirty.clear();
    let failed = false;
    this.running = this.options
      .read(ids)
      .then((again) => {
        if (!this.stopped) for (const id of again) this.dirty.add(id);
      })
      .catch((error: unknown) => {
        // Read again later: the ids are still stale here.
        if (!this.stopped) {
          if (ids === 'all') this.everything = true;
          else for (const id of ids) this.dirty.add(id);
        }
        failed = true;
        this.options.onError(error);
      })
      .finally(() => {
        this.running = undefined;
        // After a failed read (the store away), the next try waits a while instead of hammering it.
        if (this.pending() && !this.stopped) this.schedule(failed ? retryMs : undefined);
      });
  }
}

/**
 * Keeps a cache true on every node: each signal on `channel` (its payload an id) has that id read back, and everything
 * is read back after signals may have been missed. `skipOwn`: signals this node sent are not read back (the cache
 * applies its own changes as they commit). Answers how to stop.
 */
export function followChanges(signals: StoreSignals, channel: string, options: BatchedRefreshOptions & { skipOwn?: boolean }): () => void {
  const refresh = new BatchedRefresh(options);
  const unlisten = signals.listen(channel, (id, fromThisNode) => {
    if (!(options.skipOwn === true && fromThisNode)) refresh.changed(id);
  });
  signals.onResync(() => refresh.changedAll());
  return () => {
    unlisten();
    refresh.stop();
  };
}
