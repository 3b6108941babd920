// Group commit: units of work submitted close together share one transaction, one batch at a time, in order.
import type { Db } from './db.js';
import { inUnit, type Unit } from './unit.js';

/** Runs one unit of work atomically (a transaction, or `inInsertUnit` for insert-only work). */
export type UnitRunner<U> = <T>(db: Db, work: (unit: U) => Promise<T>) => Promise<T>;

interface Item<U> {
  work: (unit: U) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Each submitted unit of work runs inside a transaction shared with the others submitted before the next turn of the
 * event loop (up to `maxBatch`), in submission order; batches commit one after the other, so a later submission
 * never commits before an earlier one. If the shared transaction fails, every unit of the batch is retried alone, so
 * one bad unit fails only its own caller. Work must not wait on another submission to the same committer.
 */
export class GroupCommit<U = Unit> {
  private pending: Item<U>[] = [];
  private flushing = false;

  constructor(
    private readonly db: Db,
    private readonly runUnit: UnitRunner<U> = inUnit as unknown as UnitRunner<U>,
    private readonly maxBatch = 256,
  ) {}

  /** Runs `work` in a shared transaction; resolves with its result once committed. */
  run<T>(work: (unit: U) => Promise<T> | T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, this.maxBatch);
        let results: unknown[];
        try {
          results = await this.runUnit(this.db, async (unit) => {
            const values: unknown[] = [];
            for (const item of batch) values.push(await item.work(unit));
            return values;
          });
        } catch {
          await this.oneByOne(batch);
          continue;
        }
        batch.forEach((item, i) => item.resolve(results[i]));
      }
    } finally {
      this.flushing = false;
      // Submissions that arrived while the last batch settled its callers.
      if (this.pending.length > 0) {
        this.flushing = true;
        setImmediate(() => void this.flush());
      }
    }
  }

  private async oneByOne(batch: Item<U>[]): Promise<void> {
    for (const item of batch) {
      try {
        item.resolve(await this.runUnit(this.db, async (unit) => item.work(unit)));
      } catch (error) {
        item.reject(error);
      }
    }
  }
}
