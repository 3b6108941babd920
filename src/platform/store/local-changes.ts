// Changes this node makes to a cache of stored rows, counted per id, so a read-back that raced one is not applied over it.
import type { RowSink } from './unit.js';

/** A point in the local changes of some ids, taken before they are read back. */
export type ChangesMark = readonly number[];

/** A point in the local changes of every id, taken before everything is read back. */
export type AllChangesMark = ReadonlyMap<string, number>;

/** How long a forgotten id's last count is kept: longer than any read-back takes. */
const forgottenKeptMs = 10 * 60_000;

/**
 * Counts the changes this node makes to cached rows, per id. A read-back of an id is stale when a change of it was
 * made while the read ran, or when a unit that changed the cache ahead of its commit is still open: such an id is
 * read again instead (after its commit the store has the change; after a rollback it never had it).
 */
export class LocalChanges {
  private readonly counts = new Map<string, number>();
  private readonly open = new Map<string, number>();
  /** Ids forgotten (their rows deleted here), oldest first, with when: a read that began before still sees them change. */
  private readonly forgotten = new Map<string, number>();

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

  /** Taken before every row is read back (ids created here meanwhile are not known yet: any count of theirs is new). */
  markAll(): AllChangesMark {
    return new Map(this.counts);
  }

  /** Whether the read-back of `id`, in a read of every row marked before it, is stale (read it again). */
  racedSinceAll(id: string, mark: AllChangesMark): boolean {
    return this.open.has(id) || (this.counts.get(id) ?? 0) !== (mark.get(id) ?? 0);
  }

  /**
   * The id's row is gone. Its removal counts as a change (a read that began before it must not bring the row back);
   * its count is kept a while for such reads, then dropped.
   */
  forget(id: string, now = Date.now()): void {
    this.bump(id);
    this.forgotten.delete(id);
    this.forgotten.set(id, now);
    for (const [old, at] of this.forgotten) {
      if (now - at < forgottenKeptMs) break;
      this.forgotten.delete(old);
      if (!this.open.has(old)) this.counts.delete(old);
    }
  }

  private bump(id: string): void {
    this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
  }
}
