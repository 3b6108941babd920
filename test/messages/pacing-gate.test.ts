// The pacing gate on a clock the test moves: the rate window, the random gap, the new-chat delay, one send at a time.
import { describe, expect, it } from 'vitest';
import { PacingGate, type Passage } from '../../src/messages/pacing-gate.js';
import type { Pacing } from '../../src/core/pacing.js';
import { ManualClock, seededRandom } from '../support/manual-clock.js';

const quiet: Pacing = { enabled: true, maxPerMinute: 600, minGapMs: 0, maxGapMs: 0, newChatDelayMs: 0 };

function gateWith(pacing: Partial<Pacing>, options: { written?: (chat: string) => boolean; random?: () => number } = {}) {
  const clock = new ManualClock();
  const asked: string[] = [];
  let current: Pacing = { ...quiet, ...pacing };
  const gate = new PacingGate({
    pacing: () => current,
    hasWrittenTo: async (chat) => {
      asked.push(chat);
      return options.written ? options.written(chat) : true;
    },
    clock,
    random: options.random ?? (() => 0),
  });
  return { gate, clock, asked, setPacing: (next: Partial<Pacing>) => (current = { ...current, ...next }) };
}

/** Lets the gate's pending steps run (store answers, the turn of the send before). */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** Whether a promise has settled yet. */
async function isDone(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await settle();
  return done;
}

/** Passes one send through the gate, moving the clock to each wake-up; answers its wait and the time it passed. */
async function passOne(gate: PacingGate, clock: ManualClock, chat: string): Promise<{ waitedMs: number; at: number }> {
  const entering = gate.enter(chat);
  for (;;) {
    await settle();
    const wake = clock.nextWakeIn();
    if (wake === undefined) break;
    clock.advance(wake);
  }
  const passage = (await entering) as Passage;
  const at = clock.now();
  passage.leave();
  return { waitedMs: passage.waitedMs, at };
}

describe('pacing gate', () => {
  it('lets maxPerMinute messages through, then holds the next until the oldest of them is a minute old', async () => {
    const { gate, clock } = gateWith({ maxPerMinute: 2 });
    const start = clock.now();
    expect((await passOne(gate, clock, 'a@s.whatsapp.net')).waitedMs).toBe(0);
    clock.advance(10_000);
    expect((await passOne(gate, clock, 'b@s.whatsapp.net')).waitedMs).toBe(0);
    const third = gate.enter('a@s.whatsapp.net');
    await settle();
    expect(clock.sleeping).toBe(1);
    clock.advance(49_999);
    expect(await isDone(third)).toBe(false);
    clock.advance(1);
    const passage = (await third) as Passage;
    // The first passed at `start`: the third goes exactly a minute later, having waited 50 s.
    expect(clock.now()).toBe(start + 60_000);
    expect(passage.waitedMs).toBe(50_000);
    passage.leave();
    // The fourth waits for the second to be a minute old.
    const fourth = await passOne(gate, clock, 'a@s.whatsapp.net');
    expect(fourth.at).toBe(start + 70_000);
  });

  it('keeps a random gap in [minGapMs, maxGapMs] between two messages, counted from when the last one left', async () => {
    const draws = [0, 0.5, 0.999_999];
    let i = 0;
    const { gate, clock } = gateWith({ minGapMs: 1000, maxGapMs: 3000 }, { random: () => draws[i++ % draws.length] });
    // The first message has no message before it: it goes at once (the gap drawn is unused).
    expect((await passOne(gate, clock, 'a@s.whatsapp.net')).waitedMs).toBe(0);
    expect((await passOne(gate, clock, 'a@s.whatsapp.net')).waitedMs).toBe(2000);
    expect((await passOne(gate, clock, 'b@s.whatsapp.net')).waitedMs).toBe(3000);
    expect((await passOne(gate, clock, 'a@s.whatsapp.net')).waitedMs).toBe(1000);
    // Time spent since the last one left counts toward the gap.
    clock.advance(1500);
    expect((await passOne(gate, clock, 'a@s.whatsapp.net')).waitedMs).toBe(500);
  });

  it('draws gaps spread over the whole range with a seeded random, never outside it', async () => {
    const { gate, clock } = gateWith({ minGapMs: 200, maxGapMs: 900 }, { random: seededRandom(42) });
    await passOne(gate, clock, 'a@s.whatsapp.net');
    const gaps: number[] = [];
    for (let n = 0; n < 200; n++) gaps.push((await passOne(gate, clock, 'a@s.whatsapp.net')).waitedMs);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(200);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(900);
    // Spread, not one value: each third of the range is drawn.
    expect(gaps.some((g) => g < 433)).toBe(true);
    expect(gaps.some((g) => g >= 433 && g < 667)).toBe(true);
    expect(gaps.some((g) => g >= 667)).toBe(true);
    // The same seed draws the same gaps.
    const again = gateWith({ minGapMs: 200, maxGapMs: 900 }, { random: seededRandom(42) });
    await passOne(again.gate, again.clock, 'a@s.whatsapp.net');
    const repeated: number[] = [];
    for (let n = 0; n < 200; n++) repeated.push((await passOne(again.gate, again.clock, 'a@s.whatsapp.net')).waitedMs);
    expect(repeated).toEqual(gaps);
  });

  it('adds the new-chat delay before the first message to a chat never written to, not to a known chat nor after it', async () => {
    const { gate, clock, asked } = gateWith({ newChatDelayMs: 5000 }, { written: (chat) => chat === 'known@s.whatsapp.net' });
    expect((await passOne(gate, clock, 'known@s.whatsapp.net')).waitedMs).toBe(0);
    expect((await passOne(gate, clock, 'new@s.whatsapp.net')).waitedMs).toBe(5000);
    // Written to now: the next message there goes at once, without asking the store again.
    expect((await passOne(gate, clock, 'new@s.whatsapp.net')).waitedMs).toBe(0);
    expect((await passOne(gate, clock, 'known@s.whatsapp.net')).waitedMs).toBe(0);
    expect(asked).toEqual(['known@s.whatsapp.net', 'new@s.whatsapp.net']);
  });

  it('lets one send through at a time: the next passes only once the one before left', async () => {
    const { gate, clock } = gateWith({});
    const first = (await gate.enter('a@s.whatsapp.net')) as Passage;
    const second = gate.enter('b@s.whatsapp.net');
    expect(await isDone(second)).toBe(false);
    clock.advance(700);
    first.leave();
    const passage = (await second) as Passage;
    // Its wait includes the time the send before it held the gate.
    expect(passage.waitedMs).toBe(700);
    passage.leave();
  });

  it('answers nothing when the wait is aborted, and lets the sends behind it through', async () => {
    const { gate, clock } = gateWith({ maxPerMinute: 1 });
    await passOne(gate, clock, 'a@s.whatsapp.net');
    const abort = new AbortController();
    const held = gate.enter('a@s.whatsapp.net', abort.signal);
    await settle();
    expect(clock.sleeping).toBe(1);
    abort.abort();
    expect(await held).toBeUndefined();
    expect(clock.sleeping).toBe(0);
    // The aborted send did not count: the next one waits for the window of the first only.
    const next = await passOne(gate, clock, 'a@s.whatsapp.net');
    expect(next.waitedMs).toBe(60_000);
  });

  it('applies a settings change from the next message on (switched off: no wait)', async () => {
    const { gate, clock, setPacing } = gateWith({ minGapMs: 4000, maxGapMs: 4000 });
    await passOne(gate, clock, 'a@s.whatsapp.net');
    expect((await passOne(gate, clock, 'a@s.whatsapp.net')).waitedMs).toBe(4000);
    setPacing({ minGapMs: 100, maxGapMs: 100 });
    expect((await passOne(gate, clock, 'a@s.whatsapp.net')).waitedMs).toBe(100);
    setPacing({ enabled: false });
    expect((await passOne(gate, clock, 'a@s.whatsapp.net')).waitedMs).toBe(0);
  });
});
