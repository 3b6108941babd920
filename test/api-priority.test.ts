// API first: background steps wait for turns of the event loop while requests keep arriving, and run at once otherwise.
import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiPriority } from '../src/util/api-priority.js';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Starts `count` background steps, each of which records when it was let through. */
function startSteps(priority: ApiPriority, count: number): { released: number[]; turn: { value: number } } {
  const turn = { value: 0 };
  const released: number[] = [];
  for (let i = 0; i < count; i++) void priority.step().then(() => released.push(turn.value));
  return { released, turn };
}

describe('ApiPriority', () => {
  it('lets background work through at once while no request arrived', async () => {
    const priority = new ApiPriority({ busyWindowMs: 20, turnsPerStep: 2 });
    let through = false;
    const step = priority.step().then(() => (through = true));
    await Promise.resolve();
    expect(through).toBe(true);
    await step;
  });

  it('lets one step through every `turnsPerStep` turns while requests keep arriving', async () => {
    const priority = new ApiPriority({ busyWindowMs: 1000, turnsPerStep: 2 });
    priority.noteRequest();
    expect(priority.busy()).toBe(true);
    const { released, turn } = startSteps(priority, 5);
    for (let i = 1; i <= 8; i++) {
      priority.noteRequest();
      turn.value = i;
      await nextTurn();
    }
    // Eight turns: four steps, one every second turn, in the order they asked.
    expect(released.length).toBe(4);
    for (let i = 1; i < released.length; i++) expect(released[i] - released[i - 1]).toBe(2);
  });

  it('with one turn per step, releases a step every turn', async () => {
    const priority = new ApiPriority({ busyWindowMs: 1000, turnsPerStep: 1 });
    priority.noteRequest();
    const { released, turn } = startSteps(priority, 10);
    for (let i = 1; i <= 6; i++) {
      turn.value = i;
      await nextTurn();
    }
    expect(released.length).toBe(6);
  });

  it('lets every waiting step through once requests stop arriving', async () => {
    const priority = new ApiPriority({ busyWindowMs: 15, turnsPerStep: 50 });
    priority.noteRequest();
    const { released } = startSteps(priority, 3);
    await nextTurn();
    expect(released.length).toBe(0);
    await sleep(30);
    for (let i = 0; i < 5 && released.length < 3; i++) await nextTurn();
    expect(priority.busy()).toBe(false);
    expect(released.length).toBe(3);
  });
});
