// Paced sends end to end on both stores, on a clock the test moves: linked sandbox instances, the rate window across
// chats, the new-chat delay (a chat written to before, found in the store, has none), the wait in send.message and
// /metrics, a wait cut short by a restart (the send stays queued, announced once), and unpaced instances unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { sandboxParty as party, type Party } from '../support/sandbox-party.js';
import { ManualClock } from '../support/manual-clock.js';
import { sleep, waitFor } from '../support/wait.js';

const targets = await storeTargets();

// biome-ignore lint/suspicious/noExplicitAny: answers and event data are read field by field
type Json = any;

const still = { minGapMs: 0, maxGapMs: 0, newChatDelayMs: 0 };

describe.each(targets)('paced sends over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let clock: ManualClock;
    let b: Party;
    let c: Party;
    beforeAll(async () => {
      clock = new ManualClock();
      t = await startApp(target, { METRICS_ENABLED: 'true' }, undefined, undefined, { pacingClock: clock });
      rx = await startReceiver();
      b = await party(t, rx, 'pace-b');
      c = await party(t, rx, 'pace-c');
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    async function paced(prefix: string, pacing: Record<string, unknown>): Promise<Party> {
      const sender = await party(t, rx, prefix);
      const res = await t.api('POST', `settings/set/${sender.name}`, { body: { pacing: { enabled: true, ...pacing } } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return sender;
    }

    async function send(from: Party, to: Party, text: string): Promise<string> {
      const res = await t.api('POST', `message/sendText/${from.name}`, { body: { number: to.number, text } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.key.id as string;
    }

    /** The texts `to` received from `from`, in arrival order. */
    const received = (from: Party, to: Party) =>
      rx
        .of('messages.upsert', to.name)
        .filter((e) => e.body.data.key.remoteJid === from.owner)
        .map((e) => e.body.data.message.conversation as string);

    const announced = (from: Party): Json[] => rx.of('send.message', from.name).map((e) => e.body.data);

    async function statusOf(keyId: string) {
      const row = await t.services.store.db.selectFrom('messages').select('status').where('key_id', '=', keyId).where('from_me', '=', 1).executeTakeFirst();
      return row?.status;
    }

    /** Whether the message left (SERVER_ACK or a later receipt). */
    const left = async (keyId: string) => !['PENDING', 'ERROR', undefined].includes(await statusOf(keyId));

    /** Waits until the gate is waiting on the clock for `count` sends. */
    const sleepers = (count: number) => waitFor(() => clock.sleeping === count, 5000, { what: `${count} paced send(s) waiting on the clock` });

    it('holds the message past maxPerMinute across chats until the window frees, in order, its wait in send.message', async () => {
      const a = await paced('pace-a', { maxPerMinute: 2, ...still });
      const keys = [await send(a, b, 'one'), await send(a, c, 'two'), await send(a, b, 'three')];
      await waitFor(() => received(a, b).length === 1 && received(a, c).length === 1, 5000, { what: 'the first two messages' });
      await sleepers(1);
      // Held: the third is queued, not announced, not sent (a bounded look: nothing moves while the clock stands).
      await sleep(200);
      expect(received(a, b)).toEqual(['one']);
      expect(await statusOf(keys[2])).toBe('PENDING');
      expect(announced(a).map((d) => d.key.id)).toEqual(keys.slice(0, 2));
      clock.advance(59_999);
      await sleep(100);
      expect(received(a, b)).toEqual(['one']);
      clock.advance(1);
      await waitFor(() => received(a, b).length === 2, 5000, { what: 'the third message' });
      expect(received(a, b)).toEqual(['one', 'three']);
      await waitFor(() => left(keys[2]), 5000, { what: 'the third stored as sent' });
      expect(announced(a).map((d) => [d.key.id, d.pacingWaitMs])).toEqual([
        [keys[0], 0],
        [keys[1], 0],
        [keys[2], 60_000],
      ]);
      const metrics = String((await t.api('GET', '/metrics', { key: null })).body);
      expect(metrics).toMatch(new RegExp(`switchboard_send_pacing_wait_seconds_count\\{instance="${a.name}"\\} 3`));
      expect(metrics).toMatch(new RegExp(`switchboard_send_pacing_wait_seconds_sum\\{instance="${a.name}"\\} 60`));
    });

    it('waits newChatDelayMs before the first message to a new chat; a chat written to before (in the store) goes at once', async () => {
      // Unpaced first: the instance writes to b, so b is known from the store when pacing starts.
      const a = await party(t, rx, 'pace-n');
      const before = await send(a, b, 'hello b');
      await waitFor(() => left(before), 5000, { what: 'the unpaced send' });
      // The webhook delivering send.message may come a moment after the stored status.
      await waitFor(() => announced(a).length === 1, 5000, { what: "the unpaced send's send.message" });
      expect(announced(a)[0]).not.toHaveProperty('pacingWaitMs');
      expect(
        (
          await t.api('POST', `settings/set/${a.name}`, {
            body: { pacing: { enabled: true, maxPerMinute: 600, minGapMs: 0, maxGapMs: 0, newChatDelayMs: 5000 } },
          })
        ).status,
      ).toBe(201);
      await send(a, b, 'again b');
      await waitFor(() => received(a, b).length === 2, 5000, { what: 'the message to the known chat' });
      expect(clock.sleeping).toBe(0);
      await send(a, c, 'hello c');
      await sleepers(1);
      expect(clock.nextWakeIn()).toBe(5000);
      expect(received(a, c)).toEqual([]);
      clock.advance(5000);
      await waitFor(() => received(a, c).length === 1, 5000, { what: 'the first message to the new chat' });
      // Written to now: the next one has no delay.
      await send(a, c, 'again c');
      await waitFor(() => received(a, c).length === 2, 5000, { what: 'the second message to c' });
      await waitFor(() => announced(a).length === 4, 5000, { what: 'four send.message events' });
      expect(announced(a).map((d) => d.pacingWaitMs)).toEqual([undefined, 0, 5000, 0]);
    });

    it('a send waiting at the gate stays queued through a restart, leaves once after it, announced once', async () => {
      const a = await paced('pace-r', { maxPerMinute: 1, ...still });
      await send(a, b, 'first');
      const held = await send(a, b, 'second');
      await sleepers(1);
      const restart = await t.api('POST', `instance/restart/${a.name}`);
      expect(restart.status, JSON.stringify(restart.body)).toBe(200);
      await waitFor(async () => (await t.api('GET', `instance/connectionState/${a.name}`)).body.instance?.state === 'open', 5000, {
        what: 'the instance open again',
      });
      // The wait was cut short by the restart and begun again (the gate remembers the window while the service runs).
      await sleepers(1);
      expect(await statusOf(held)).toBe('PENDING');
      expect(announced(a)).toHaveLength(1);
      clock.advance(60_000);
      await waitFor(() => received(a, b).length === 2, 5000, { what: 'the held message' });
      await waitFor(() => announced(a).length === 2, 5000, { what: 'its send.message' });
      await sleep(100);
      expect(received(a, b)).toEqual(['first', 'second']);
      expect(announced(a).map((d) => d.key.id)).toHaveLength(2);
      expect(announced(a)[1].key.id).toBe(held);
    });

    it('an unpaced instance sends a burst at once, on the clock-free path (no pacingWaitMs)', async () => {
      const a = await party(t, rx, 'pace-off');
      for (let i = 0; i < 10; i++) await send(a, b, `m${i}`);
      await waitFor(() => received(a, b).length === 10, 5000, { what: 'ten unpaced messages' });
      expect(received(a, b)).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`));
      expect(clock.sleeping).toBe(0);
      await waitFor(() => announced(a).length === 10, 5000, { what: 'ten send.message events' });
      expect(announced(a).every((d) => !('pacingWaitMs' in d))).toBe(true);
    });
  });
});

describe.each(targets)('PACING_* defaults over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let clock: ManualClock;
    beforeAll(async () => {
      clock = new ManualClock();
      const env = { PACING_ENABLED: 'true', PACING_MAX_PER_MINUTE: '1', PACING_MIN_GAP_MS: '0', PACING_MAX_GAP_MS: '0', PACING_NEW_CHAT_DELAY_MS: '0' };
      t = await startApp(target, env, undefined, undefined, { pacingClock: clock });
      rx = await startReceiver();
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    const texts = (from: Party, to: Party) =>
      rx
        .of('messages.upsert', to.name)
        .filter((e) => e.body.data.key.remoteJid === from.owner)
        .map((e) => e.body.data.message.conversation as string);

    it('paces an instance that set nothing by the defaults; one that switched pacing off sends at once', async () => {
      const to = await party(t, rx, 'pace-d-to');
      const byDefault = await party(t, rx, 'pace-d');
      const optedOut = await party(t, rx, 'pace-d-off');
      expect((await t.api('POST', `settings/set/${optedOut.name}`, { body: { pacing: { enabled: false } } })).status).toBe(201);
      for (const from of [byDefault, optedOut]) {
        for (const text of ['one', 'two']) {
          const res = await t.api('POST', `message/sendText/${from.name}`, { body: { number: to.number, text } });
          expect(res.status, JSON.stringify(res.body)).toBe(201);
        }
      }
      await waitFor(() => texts(optedOut, to).length === 2 && texts(byDefault, to).length === 1, 5000, { what: 'the unheld messages' });
      await waitFor(() => clock.sleeping === 1, 5000, { what: 'the held message waiting on the clock' });
      await sleep(100);
      expect(texts(byDefault, to)).toEqual(['one']);
      clock.advance(60_000);
      await waitFor(() => texts(byDefault, to).length === 2, 5000, { what: 'the held message' });
      expect(texts(byDefault, to)).toEqual(['one', 'two']);
    });
  });
});
