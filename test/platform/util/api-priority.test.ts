// API first: background steps wait for turns of the event loop while requests keep arriving, and run at once otherwise.
import { describe, expect, it } from 'vitest';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiPriority } from '../../../src/platform/util/api-priority.js';

const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

describe('ApiPriority', () => {
  it('lets background work through at once while no request arrived', async () => {
    const priority = new ApiPriority({ busyWindowMs: 20, turnsPerRound: 2 });
    let through = false;
    const step = priority.step().then(() => (through = true));
    await Promise.resolve();
    expect(through).toBe(true);
    await step;
  });

  /**
   * Rounds of steps let through while requests keep arriving for `ms`: `lanes` loops of background work, each asking
   * for its next step as soon as the last one was let through. Answers the time of each round and its size.
   */
  async function roundsWhileBusy(turnsPerRound: number, ms: number, lanes: number): Promise<{ at: number; size: number }[]> {
    const priority = new ApiPriority({ busyWindowMs: 1000, turnsPerRound });
    priority.noteRequest();
    const started = performance.now();
    const rounds: { at: number; size: number; open: boolean }[] = [];
    let stopped = false;
    const lane = async () => {
      while (!stopped) {
        await priority.step();
        const at = performance.now() - started;
        const last = rounds[rounds.length - 1];
        // Steps let through by the same round resume in the same run of microtasks, before any other macrotask:
        // a round stays open until the next one (however slow the machine, no clock decides it).
        if (last?.open) last.size += 1;
        else {
          const round = { at, size: 1, open: true };
          rounds.push(round);
          setImmediate(() => (round.open = false));
        }
      }
    };
    const running = Array.from({ length: lanes }, () => lane());
    while (performance.now() - started < ms) {
      priority.noteRequest();
      await sleep(1);
    }
    stopped = true;
    const result = rounds.slice();
    await sleep(30);
    await Promise.all(running);
    return result;
  }

  it('lets the waiting steps through together, a round every few turns, while requests keep arriving', async () => {
    const rounds = await roundsWhileBusy(2, 60, 5);
    // A round every second turn, a turn being a timer of 1 ms: about 30 in 60 ms, not a step per microtask.
    expect(rounds.length).toBeGreaterThan(3);
    expect(rounds.length).toBeLessThanOrEqual(35);
    // Each round starts every lane (one step each): five lanes are not served one after the other.
    for (const round of rounds) expect(round.size).toBe(5);
  });

  it('holds rounds further apart with more turns per step', async () => {
    const everyTurn = await roundsWhileBusy(1, 60, 2);
    const everyFourth = await roundsWhileBusy(4, 60, 2);
    expect(everyTurn.length).toBeGreaterThan(everyFourth.length);
    expect(everyFourth.length).toBeLessThanOrEqual(16);
  });

  it('lets every waiting step through once requests stop arriving', async () => {
    const priority = new ApiPriority({ busyWindowMs: 15, turnsPerRound: 50 });
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
