// The local changes a read-back checks against: a change or a removal made while a read ran makes that read stale,
// for a read of some ids and for a read of everything; removals are remembered for a while, then dropped.
import { describe, expect, it } from 'vitest';
import { LocalChanges } from '../../../src/platform/store/local-changes.js';

/** A unit that the test commits or rolls back. */
function unit() {
  const hooks: { commit: (() => void)[]; rollback: (() => void)[] } = { commit: [], rollback: [] };
  return {
    afterCommit: (hook: () => void) => hooks.commit.push(hook),
    onRollback: (hook: () => void) => hooks.rollback.push(hook),
    commit: () => {
      for (const hook of hooks.commit) hook();
    },
  };
}

describe('local changes', () => {
  it('makes a read of some ids stale when one of them changed or was removed during it', () => {
    const changes = new LocalChanges();
    const ids = ['a', 'b', 'c'];
    const mark = changes.mark(ids);
    changes.made('a');
    changes.forget('b');
    expect(ids.map((id, index) => changes.raced(id, mark, index))).toEqual([true, true, false]);
  });

  it('makes a read of everything stale for ids changed, created or removed during it, and while a unit is open', () => {
    const changes = new LocalChanges();
    changes.made('old');
    const mark = changes.markAll();
    changes.made('old');
    changes.made('created');
    changes.forget('never-changed-before');
    const open = unit();
    changes.madeIn(open, 'in-a-unit');
    expect(['old', 'created', 'never-changed-before', 'in-a-unit', 'untouched'].map((id) => changes.racedSinceAll(id, mark))).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
    const later = changes.markAll();
    expect(changes.racedSinceAll('in-a-unit', later)).toBe(true);
    open.commit();
    expect(changes.racedSinceAll('in-a-unit', changes.markAll())).toBe(false);
  });

  it('drops what it keeps of removed ids ten minutes after their removal', () => {
    const changes = new LocalChanges();
    const start = 1_000_000;
    changes.forget('gone', start);
    const mark = changes.markAll();
    expect(mark.get('gone')).toBe(1);
    // Another removal ten minutes later drops the first one's count: a read marked now sees nothing of it.
    changes.forget('later', start + 10 * 60_000);
    expect(changes.markAll().has('gone')).toBe(false);
    expect(changes.markAll().get('later')).toBe(1);
  });
});
