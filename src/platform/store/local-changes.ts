// Changes this node makes to a cache of stored rows, counted per id, so a read-back that raced one is not applied over it.
import type { RowSink } from './unit.js';

/** A point in the local changes of some ids, taken before they are read back. */
export type ChangesMark = readonly number[];

/**
 * Counts the changes this node makes to cached rows, per id. A read-back of an id is stale when a change of it was
 * made while the read ran, or when a unit that changed the cache ahead of its commit is still open: such an id is
 * read again instead (after its commit the store has the change; after a rollback it never had it).
 */
export class LocalChanges {
  private readonly counts = new Map<string, number>();
  private readonly open = new Map<string, number>();

  /** `id`'s cached row was changed for `unit`, ahead of its commit: stale reads until the unit ends. */
  madeIn(unit: Pick<RowSink, 'afterCommit' | 'onRollback'>, id: string): void {
    this.bump(id);
    this.open.set(id, (this.open.get(id) ?? 0) + 1);
    const ended = () => {
      const left = (this.open.get(id) ?? 1) - 1;
      if (left > 0) this.open.set(id, left);
      else this.open.delete(id);
      this.bump(id);
    };
    unit.afterCommit(ended);
    unit.onRollback(ended);
  }

  /** `id`'s cached row was changed to what a unit just committed. */
  made(id: string): void {
    this.bump(id);
  }

  /** Taken before `ids` are read back. */
  mark(ids: readonly string[]): ChangesMark {
    return ids.map((id) => this.counts.get(id) ?? 0);
  }

  /** Whether the read-back of `ids[index]`, marked before the read, is stale (read it again). */
  raced(id: string, mark: ChangesMark, index: number): boolean {
    return this.open.has(id) || (this.counts.get(id) ?? 0) !== mark[index];
  }

  /** The id's row is gone: nothing more to count. */
  forget(id: string): void {
    if (!this.open.has(id)) this.counts.delete(id);
  }

  private bump(id: string): void {
    this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
  }
}
