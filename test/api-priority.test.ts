// API first: background steps wait for turns of the event loop while requests keep arriving, and run at once otherwise.
import { describe, expect, it } from 'vitest';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiPriority } from '../src/util/api-priority.js';

const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

describe('ApiPriority', () => {
  it('lets background work through at once while no request arrived', async () => {
    const priority = new ApiPriority({ busyWindowMs: 20, turnsPerStep: 2 });
    let through = false;
    const step = priority.step().then(() => (through = true));
    await Promise.resolve();
    expect(through).toBe(true);
    await step;
  });

  /** Steps let through while requests keep arriving for `ms`, with `waiting` steps asking from the start. */
  async function releasedWhileBusy(turnsPerStep: number, ms: number, waiting = 1000): Promise<number[]> {
    const priority = new ApiPriority({ busyWindowMs: 1000, turnsPerStep });
    priority.noteRequest();
    const started = performance.now();
    const at: number[] = [];
    for (let i = 0; i < waiting; i++) void priority.step().then(() => at.push(performance.now() - started));
    while (performance.now() - started < ms) {
      priority.noteRequest();
      await sleep(1);
    }
    const count = at.length;
    return at.slice(0, count);
  }

  it('lets one step through at a time while requests keep arriving, in turns of at least a millisecond', async () => {
    const released = await releasedWhileBusy(2, 60);
    // A step every second turn, a turn being a timer of 1 ms: about 30 in 60 ms (not the 1,000 waiting at once).
    expect(released.length).toBeGreaterThan(3);
    expect(released.length).toBeLessThanOrEqual(35);
  });

  it('lets more steps through with fewer turns per step', async () => {
    const everyTurn = await releasedWhileBusy(1, 60);
    const everyFourth = await releasedWhileBusy(4, 60);
    expect(everyTurn.length).toBeGreaterThan(everyFourth.length);
    expect(everyFourth.length).toBeLessThanOrEqual(16);
  });

  it('lets every waiting step through once requests stop arriving', async () => {
    const priority = new ApiPriority({ busyWindowMs: 15, turnsPerStep: 50 });
    priority.noteRequest();
    const released: number[] = [];
    for (let i = 0; i < 3; i++) void priority.step().then(() => released.push(i));
    await nextTurn();
    expect(released.length).toBe(0);
    await sleep(30);
    for (let i = 0; i < 5 && released.length < 3; i++) await nextTurn();
    expect(priority.busy()).toBe(false);
    expect(released.length).toBe(3);
  });
});
