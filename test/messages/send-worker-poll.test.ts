// The send workers' safety poll on both stores: one poll for every instance of a node finds a send whose wake-up was
// lost and delivers it, and instances with nothing queued cost no query of their own.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startApp, storeTargets, linkedSandbox, type TestApp } from '../support/harness.js';
import { uniqueName, uniqueNumber } from '../support/unique.js';
import { waitFor } from '../support/wait.js';

const targets = await storeTargets();

describe.each(targets)('send worker poll on $name', (target) => {
  describe.skipIf(!target.available)('app', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp(target, { SEND_WORKER_POLL_MS: '300' });
    });
    afterAll(async () => {
      vi.restoreAllMocks();
      await t?.close();
    });

    it('delivers a send whose wake-up was lost within the poll interval, and polls once for all idle instances', async () => {
      const name = uniqueName('polled');
      await linkedSandbox(t, name, uniqueNumber('4916'));
      // Ten more open instances with nothing queued.
      for (let i = 0; i < 10; i++) await linkedSandbox(t, uniqueName('idle'), uniqueNumber('4916'));
      // Wake-ups are lost: only the poll can find the send.
      const workers = t.services.workers;
      vi.spyOn(workers, 'wake').mockImplementation(() => undefined);
      vi.spyOn(workers, 'wakeChat').mockImplementation(() => undefined);
      const sent = await t.api('POST', `message/sendText/${name}`, { body: { number: '5511977770042', text: 'found by the poll' } });
      expect(sent.status).toBe(201);
      const id = sent.body.key.id as string;
      const status = async () =>
        (await t.services.store.db.selectFrom('send_queue').select('message_id').where('message_id', '=', id).executeTakeFirst()) === undefined;
      await waitFor(status, 5_000, { what: 'the send taken off the queue by the poll' });
      const found = await t.api('POST', `chat/findMessages/${name}`, { body: { where: { key: { id } } } });
      expect(found.status).toBe(200);
      expect(JSON.stringify(found.body)).toContain('found by the poll');
      expect(JSON.stringify(found.body)).not.toMatch(/"status":"PENDING"/);

      // Idle instances cost no query each: over four poll intervals the queue is looked into once per interval (and
      // by the last steps of the send above), not once per instance and interval (eleven open instances: 44 or more).
      const executor = t.services.store.db.getExecutor();
      const execute = executor.executeQuery.bind(executor);
      let queueLooks = 0;
      vi.spyOn(executor, 'executeQuery').mockImplementation(((...args: Parameters<typeof execute>) => {
        if (args[0].sql.includes('send_queue')) queueLooks++;
        return execute(...args);
      }) as typeof executor.executeQuery);
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      vi.mocked(executor.executeQuery).mockRestore();
      expect(queueLooks).toBeGreaterThan(0);
      expect(queueLooks).toBeLessThanOrEqual(16);
    });
  });
});
