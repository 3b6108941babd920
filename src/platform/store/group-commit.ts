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
 * unit, in submission order. Batches commit one after the other, so a later item never commits before an earlier
 * one. `inFlight` above 1 lets the next batches start before the one before them has committed: only for a store
 * that runs what it is sent strictly in order (the SQLite thread), where they still commit in order. If a batch
 * fails, each of its items is written alone, so one bad item fails only its own caller.
 */
export class BatchCommit<T, R, U = Unit> {
  private pending: Pending<T, R>[] = [];
  private scheduled = false;
  private running = 0;

  constructor(
    private readonly db: Db,
    private readonly runUnit: UnitRunner<U>,
    /** Writes the items and answers one result per item, in order. */
    private readonly write: (unit: U, items: T[]) => Promise<R[]>,
    private readonly maxBatch: number,
    private readonly inFlight = 1,
  ) {}

  /** Resolves with the item's result once its batch is committed. */
  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Starts writing on the next turn of the event loop, if a batch may start then. */
  private schedule(): void {
    if (this.scheduled || this.running >= this.inFlight || this.pending.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  /** Writes batches until nothing is pending; at most `inFlight` of these run at once. */
  private async drain(): Promise<void> {
    if (this.running >= this.inFlight) return;
    this.running++;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, this.maxBatch);
        // What arrives while this batch is written may start beside it.
        this.schedule();
        let results: R[];
        try {
          results = await this.runUnit(this.db, (unit) =>
            this.write(
              unit,
              batch.map((p) => p.item),
            ),
          );
        } catch {
          await this.oneByOne(batch);
          continue;
        }
        batch.forEach((p, i) => {
          p.resolve(results[i]);
        });
      }
    } finally {
      this.running--;
      // Submissions that arrived while the last batch settled its callers.
      this.schedule();
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

  constructor(db: Db, runUnit: UnitRunner<U> = inUnit as unknown as UnitRunner<U>, maxBatch = 256, inFlight = 1) {
    this.batches = new BatchCommit(
      db,
      runUnit,
      async (unit, works) => {
        const values: unknown[] = [];
        for (const work of works) values.push(await work(unit));
        return values;
      },
      maxBatch,
      inFlight,
    );
  }

  /** Runs `work` in a shared transaction; resolves with its result once committed. */
  run<T>(work: (unit: U) => Promise<T> | T): Promise<T> {
    return this.batches.submit(work) as Promise<T>;
  }
}
