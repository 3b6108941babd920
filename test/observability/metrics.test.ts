// Prometheus metrics over HTTP: off by default; when on, the standard process/Node.js names and Switchboard's own per instance.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkedSandbox, startApp, startReceiver, storeTargets, type TestApp } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

const targets = await storeTargets();

describe.each(targets)('metrics on $name', (target) => {
  describe.skipIf(!target.available)('metrics', () => {
    let t: TestApp;
    let off: TestApp;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let failing = true;

    beforeAll(async () => {
      t = await startApp(target, { METRICS_ENABLED: 'true' });
      off = await startApp(target);
      receiver = await startReceiver(() => (failing ? 503 : 200));
    });
    afterAll(async () => {
      await t?.close();
      await off?.close();
      await receiver?.close();
    });

    it('is not served unless METRICS_ENABLED', async () => {
      expect((await off.api('GET', '/metrics', { key: null })).status).toBe(404);
    });

    it('serves the standard process and Node.js metrics under their own names, and no doubled prefix', async () => {
      const answer = await t.api('GET', '/metrics', { key: null });
      expect(answer.status).toBe(200);
      const text = String(answer.body);
      for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
        expect(text).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
      }
      expect(text).not.toMatch(/switchboard_process_/);
      const names = [...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]);
      const standard = (name: string) => name.startsWith('process_') || name.startsWith('nodejs_');
      expect(names.filter((name) => !standard(name) && !name.startsWith('switchboard_'))).toEqual([]);
      expect(names.filter((name) => /^switchboard_.*(process_|nodejs_)/.test(name))).toEqual([]);
      expect(names).toEqual(
        expect.arrayContaining(['switchboard_webhook_deliveries_total', 'switchboard_outbox_pending_deliveries', 'switchboard_send_queue_pending']),
      );
    });

    it('shows pending deliveries, then delivery results and latency for the instance', async () => {
      await linkedSandbox(t, 'metered', '5511977770001');
      await t.api('POST', 'webhook/set/metered', { body: { webhook: { enabled: true, url: receiver.url, events: ['MESSAGES_UPSERT'] } } });
      const inject = await t.api('POST', 'sandbox/inject/metered', { body: { from: '5511977770002', text: 'count me' } });
      expect(inject.status).toBe(201);

      const pending = await waitFor(async () => {
        const text = String((await t.api('GET', '/metrics', { key: null })).body);
        return /switchboard_webhook_deliveries_total\{instance="metered",target="instance",result="retry"\} [1-9]/.test(text) && text;
      });
      expect(pending).toMatch(/switchboard_outbox_pending_deliveries\{instance="metered",target="instance"\} 1/);

      failing = false;
      const delivered = await waitFor(async () => {
        const text = String((await t.api('GET', '/metrics', { key: null })).body);
        return /switchboard_webhook_deliveries_total\{instance="metered",target="instance",result="delivered"\} 1/.test(text) && text;
      }, 10_000);
      expect(delivered).toMatch(/switchboard_webhook_delivery_latency_seconds_count\{instance="metered",target="instance"\} 1/);
      expect(delivered).not.toMatch(/switchboard_outbox_pending_deliveries\{instance="metered"/);
      expect(delivered).toMatch(/# TYPE switchboard_send_queue_pending gauge/);
    });

    it('counts delivered sends per instance', async () => {
      await linkedSandbox(t, 'sender', '5511977770003');
      expect((await t.api('POST', 'message/sendText/sender', { body: { number: '5511977770001', text: 'hi' } })).status).toBe(201);
      await waitFor(async () =>
        /switchboard_sends_total\{instance="sender",result="delivered"\} 1/.test(String((await t.api('GET', '/metrics', { key: null })).body)),
      );
    });
  });
});
