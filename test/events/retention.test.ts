// Retention of the event log on both stores: old delivered events go; pending and dead-lettered ones stay replayable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkedSandbox, startApp, startReceiver, storeTargets, type TestApp } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

const targets = await storeTargets();
const day = 86400_000;

describe.each(targets)('event retention on $name', (target) => {
  describe.skipIf(!target.available)('sweep', () => {
    let t: TestApp;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let refuse = false;

    beforeAll(async () => {
      t = await startApp(target, { EVENT_RETENTION_DAYS: '7' });
      receiver = await startReceiver(() => (refuse ? 404 : 200));
    });
    afterAll(async () => {
      await t?.close();
      await receiver?.close();
    });

    it('removes old delivered deliveries and their events, keeps dead ones replayable', async () => {
      await linkedSandbox(t, 'kept', '5511944440001');
      await t.api('POST', 'webhook/set/kept', { body: { webhook: { enabled: true, url: receiver.url, events: ['MESSAGES_UPSERT'] } } });
      await t.api('POST', 'sandbox/inject/kept', { body: { from: '5511944440002', text: 'delivered one' } });
      await receiver.waitFor((events) => events.length === 1);
      refuse = true;
      await t.api('POST', 'sandbox/inject/kept', { body: { from: '5511944440002', text: 'dead one' } });
      const db = t.services.store.db;
      await waitFor(async () => (await db.selectFrom('deliveries').select('id').where('state', '=', 'dead').execute()).length === 1);

      // Nothing is old yet.
      expect(await t.services.retention.sweep()).toEqual({ deliveries: 0, events: 0 });

      const later = await t.services.retention.sweep(Date.now() + 8 * day);
      expect(later.deliveries).toBe(1);
      expect(later.events).toBeGreaterThan(1);
      const left = await db.selectFrom('deliveries').select(['state', 'event_id']).execute();
      expect(left.map((d) => d.state)).toEqual(['dead']);
      const events = await db.selectFrom('outbox').select('id').execute();
      expect(events.map((e) => e.id)).toEqual([left[0].event_id]);

      refuse = false;
      const redeliver = await t.api('POST', 'webhook/redeliver/kept', { body: { status: 'dead' } });
      expect(redeliver.body).toEqual({ requeued: 1 });
      await receiver.waitFor((received) => received.some((e) => e.body.data.message.conversation === 'dead one'));
    });

    it('is not held back by the cursor of a broker that is switched off', async () => {
      const db = t.services.store.db;
      // NATS relayed up to here once, then was switched off (this app runs no broker): its cursor stays behind.
      const last = await db
        .selectFrom('outbox')
        .select((eb) => eb.fn.max('seq').as('seq'))
        .executeTakeFirstOrThrow();
      await db
        .insertInto('broker_cursors')
        .values({ sink: 'nats', last_seq: Number(last.seq ?? 0), updated_at: Date.now() })
        .execute();
      await t.api('POST', 'sandbox/inject/kept', { body: { from: '5511944440002', text: 'after nats went away' } });
      await receiver.waitFor((received) => received.some((e) => e.body.data.message.conversation === 'after nats went away'));
      await waitFor(async () => (await db.selectFrom('deliveries').select('id').where('state', '=', 'pending').execute()).length === 0);
      const swept = await t.services.retention.sweep(Date.now() + 8 * day);
      expect(swept.events).toBeGreaterThan(0);
      const newer = await db
        .selectFrom('outbox')
        .select('seq')
        .where('seq', '>', Number(last.seq ?? 0))
        .execute();
      expect(newer).toEqual([]);
    });
  });
});
