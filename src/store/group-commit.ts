// Group commit: units of work submitted close together share one transaction, one batch at a time, in order.
import type { Db } from './db.js';
import { inUnit, type Unit } from './unit.js';

/** Runs one unit of work atomically (a transaction, or `inInsertUnit` for insert-only work). */
export type UnitRunner<U> = <T>(db: Db, work: (unit: U) => Promise<T>) => Promise<T>;

interface Pending<T, R> {
  item: T;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Items submitted before the next turn of the event loop (up to `maxBatch`) are written by one call of `write` in one
 * unit, in submission order; batches commit one after the other, so a later item never commits before an earlier
 * one. If a batch fails, each of its items is written alone, so one bad item fails only its own caller.
 */
export class BatchCommit<T, R, U = Unit> {
  private pending: Pending<T, R>[] = [];
  private flushing = false;

  constructor(
    private readonly db: Db,
    private readonly runUnit: UnitRunner<U>,
    /** Writes the items and answers one result per item, in order. */
    private readonly write: (unit: U, items: T[]) => Promise<R[]>,
    private readonly maxBatch: number,
  ) {}

  /** Resolves with the item's result once its batch is committed. */
  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
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
        let results: R[];
        try {
          results = await this.runUnit(this.db, (unit) => this.write(unit, batch.map((p) => p.item)));
        } catch {
          await this.oneByOne(batch);
          continue;
        }
        batch.forEach((p, i) => p.resolve(results[i]));
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

  private async oneByOne(batch: Pending<T, R>[]): Promise<void> {
    for (const p of batch) {
      try {
        const [result] = await this.runUnit(this.db, (unit) => this.write(unit, [p.item]));
        p.resolve(result);
      } catch (error) {
        p.reject(error);
      }
    }
  }
}

/**
 * Each submitted unit of work runs inside a transaction shared with the others submitted before the next turn of the
 * event loop, in submission order (see `BatchCommit`). Work must not wait on another submission to the same committer.
 */
export class GroupCommit<U = Unit> {
  private readonly batches: BatchCommit<(unit: U) => unknown, unknown, U>;

  constructor(db: Db, runUnit: UnitRunner<U> = inUnit as unknown as UnitRunner<U>, maxBatch = 256) {
    this.batches = new BatchCommit(
      db,
      runUnit,
      async (unit, works) => {
        const values: unknown[] = [];
        for (const work of works) values.push(await work(unit));
        return values;
      },
      maxBatch,
    );
  }

  /** Runs `work` in a shared transaction; resolves with its result once committed. */
  run<T>(work: (unit: U) => Promise<T> | T): Promise<T> {
    return this.batches.submit(work) as Promise<T>;
  }
}
