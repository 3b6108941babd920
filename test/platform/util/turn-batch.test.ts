// Calls made in one turn of the event loop are answered by one call on all of them, each caller its own result.
import { describe, expect, it } from 'vitest';
import { groupedTurnBatch, keyedTurnBatch, TurnBatch } from '../../../src/platform/util/turn-batch.js';

describe('TurnBatch', () => {
  it('hands the items asked for in one turn to one call, in order, and answers each caller its own result', async () => {
    const calls: number[][] = [];
    const batch = new TurnBatch<number, string>(async (items) => {
      calls.push(items);
      return items.map((n) => `#${n}`);
    });
    const answers = await Promise.all([batch.call(1), batch.call(2), batch.call(3)]);
    expect(answers).toEqual(['#1', '#2', '#3']);
    expect(calls).toEqual([[1, 2, 3]]);
    // A later turn is a batch of its own.
    expect(await batch.call(4)).toBe('#4');
    expect(calls).toEqual([[1, 2, 3], [4]]);
  });

  it('splits a turn into calls of at most maxBatch items', async () => {
    const sizes: number[] = [];
    const batch = new TurnBatch<number, number>(async (items) => {
      sizes.push(items.length);
      return items.map((n) => n * 2);
    }, 4);
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => batch.call(i)));
    expect(answers).toEqual(Array.from({ length: 10 }, (_, i) => i * 2));
    expect(sizes).toEqual([4, 4, 2]);
  });

  it('fails every caller of a failed batch with its error, and the next batch runs', async () => {
    let fail = true;
    const batch = new TurnBatch<number, number>(async (items) => {
      if (fail) throw new Error('store away');
      return items;
    });
    const failed = await Promise.allSettled([batch.call(1), batch.call(2)]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((failed[0] as PromiseRejectedResult).reason).toHaveProperty('message', 'store away');
    fail = false;
    expect(await batch.call(3)).toBe(3);
  });
});

describe('keyedTurnBatch', () => {
  it('reads each key once per turn, and answers the missing value for keys not found', async () => {
    const reads: string[][] = [];
    const batch = keyedTurnBatch<string | null>(async (keys) => {
      reads.push(keys);
      return new Map(keys.filter((key) => key !== 'gone').map((key) => [key, `value of ${key}`]));
    }, null);
    const answers = await Promise.all(['a', 'b', 'a', 'gone'].map((key) => batch.call(key)));
    expect(answers).toEqual(['value of a', 'value of b', 'value of a', null]);
    expect(reads).toEqual([['a', 'b', 'gone']]);
  });
});

describe('groupedTurnBatch', () => {
  it('answers each key its own rows, in the order read, and no rows for a key with none', async () => {
    const reads: string[][] = [];
    const batch = groupedTurnBatch(
      async (keys) => {
        reads.push(keys);
        return [
          { owner: 'a', n: 1 },
          { owner: 'b', n: 2 },
          { owner: 'a', n: 3 },
        ].filter((row) => keys.includes(row.owner));
      },
      (row) => row.owner,
    );
    const [a, b, none] = await Promise.all([batch.call('a'), batch.call('b'), batch.call('none')]);
    expect(a.map((row) => row.n)).toEqual([1, 3]);
    expect(b.map((row) => row.n)).toEqual([2]);
    expect(none).toEqual([]);
    expect(reads).toEqual([['a', 'b', 'none']]);
  });
});
