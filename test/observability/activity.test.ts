// GET /instance/activity: each instance's state, queued sends and webhook delivery trouble, with totals; an instance
// key sees its own instance only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkedSandbox, startApp, startReceiver, storeTargets, type TestApp } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

const targets = await storeTargets();

describe.each(targets)('instance activity on $name', (target) => {
  describe.skipIf(!target.available)('activity', () => {
    let t: TestApp;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;

    beforeAll(async () => {
      // A failed attempt is retried only after a minute: the delivery stays pending and failing while the test looks.
      t = await startApp(target, { WEBHOOK_RETRY_INITIAL_DELAY_SECONDS: '60', WEBHOOK_RETRY_MAX_DELAY_SECONDS: '60' });
      receiver = await startReceiver(() => 503);
    });
    afterAll(async () => {
      await t?.close();
      await receiver?.close();
    });

    it('counts queued sends, failing deliveries and the outbox lag per instance; an instance key sees its own only', async () => {
      const linked = await linkedSandbox(t, 'busy', '5511966660001');
      await t.api('POST', 'webhook/set/busy', { body: { webhook: { enabled: true, url: receiver.url, events: ['MESSAGES_UPSERT'] } } });
      expect((await t.api('POST', 'sandbox/inject/busy', { body: { from: '5511966660009', text: 'fail me' } })).status).toBe(201);

      const idle = await t.api('POST', 'instance/create', { body: { instanceName: 'idle', integration: 'SANDBOX' } });
      expect(idle.status).toBe(201);
      // Not linked: the send waits in the queue.
      expect((await t.api('POST', 'message/sendText/idle', { body: { number: '5511966660010', text: 'later' } })).status).toBe(201);

      const answer = await waitFor(
        async () => {
          const got = await t.api('GET', 'instance/activity');
          const busy = got.body.instances.find((row: { instanceName: string }) => row.instanceName === 'busy');
          return busy?.deliveries.failing === 1 && got;
        },
        10_000,
        { what: 'a failing delivery of busy' },
      );
      expect(answer.status).toBe(200);
      const byName = Object.fromEntries(answer.body.instances.map((row: { instanceName: string }) => [row.instanceName, row]));
      expect(byName.busy).toMatchObject({ state: 'open', queuedSends: 0, deliveries: { pending: 1, failing: 1, dead: 0 } });
      expect(typeof byName.busy.lastActivityAt).toBe('string');
      expect(byName.idle).toMatchObject({ state: 'close', queuedSends: 1, deliveries: { pending: 0, failing: 0, dead: 0 } });
      expect(answer.body.totals).toMatchObject({ queuedSends: 1, deliveries: { pending: 1, failing: 1, dead: 0 } });
      expect(answer.body.totals.outboxLagSeconds).toBeGreaterThanOrEqual(0);

      const own = await t.api('GET', 'instance/activity', { key: linked.apikey });
      expect(own.status).toBe(200);
      expect(own.body.instances.map((row: { instanceName: string }) => row.instanceName)).toEqual(['busy']);
      expect(own.body.totals.queuedSends).toBe(0);
      expect((await t.api('GET', 'instance/activity', { key: 'not-a-key-of-anyone' })).status).toBe(401);
    });
  });
});
