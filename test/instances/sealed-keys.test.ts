// Instance keys are stored sealed with SECRETS_KEY and unsealed a few at a time after a load: after a restart each
// instance still answers to its key and lists it, the first listing unseals nothing more, and a store sealed with another
// SECRETS_KEY fails the start, as before.
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SecretsBox } from '../../src/platform/util/secrets-box.js';
import { appOnStore, loadedServices, removeDataDir, storeKeys, type AppOnStore, type StoreKeys } from '../support/app-on-store.js';
import { storeTargets } from '../support/harness.js';
import { uniqueName } from '../support/unique.js';

const targets = await storeTargets();

describe.each(targets)('sealed instance keys on $name', (target) => {
  describe.skipIf(!target.available)('store', () => {
    let opened: Awaited<ReturnType<typeof target.open>>;
    let keys: StoreKeys;
    let app: AppOnStore | undefined;

    beforeAll(async () => {
      opened = await target.open();
      keys = storeKeys(opened.uri);
    });
    afterEach(() => {
      vi.restoreAllMocks();
    });
    afterAll(async () => {
      await app?.close();
      await opened?.store.close();
      await opened?.dispose();
      if (keys) removeDataDir(keys);
    });

    it('are answered and accepted after a restart, and a different SECRETS_KEY fails the load', async () => {
      app = await appOnStore(opened.store, keys);
      const created: { name: string; apikey: string }[] = [];
      for (let i = 0; i < 3; i++) {
        const name = uniqueName('sealed');
        const answer = await app.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } });
        expect(answer.status, JSON.stringify(answer.body)).toBe(201);
        created.push({ name, apikey: answer.body.hash.apikey });
      }
      await app.close();

      app = await appOnStore(opened.store, keys);
      const listed = await app.api('GET', 'instance/fetchInstances');
      expect(listed.status).toBe(200);
      const listedKeys = new Map(
        listed.body.map((entry: { instance: { instanceName: string; apikey: string } }) => [entry.instance.instanceName, entry.instance.apikey]),
      );
      for (const { name, apikey } of created) {
        expect(listedKeys.get(name)).toBe(apikey);
        const own = await app.api('GET', `instance/connectionState/${name}`, { key: apikey });
        expect(own.status, name).toBe(200);
      }
      await app.close();
      app = undefined;

      // Started again: every key is unsealed soon after the load, without a listing; the first listing then unseals none.
      const opens = vi.spyOn(SecretsBox.prototype, 'open');
      app = await appOnStore(opened.store, keys);
      const total = app.services.registry.all().length;
      expect(total).toBeGreaterThanOrEqual(created.length);
      for (let turn = 0; turn < 200 && opens.mock.calls.length < total; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect(opens.mock.calls.length).toBe(total);
      const relisted = await app.api('GET', 'instance/fetchInstances');
      expect(relisted.status).toBe(200);
      expect(opens.mock.calls.length).toBe(total);
      const relistedKeys = new Map(
        relisted.body.map((entry: { instance: { instanceName: string; apikey: string } }) => [entry.instance.instanceName, entry.instance.apikey]),
      );
      for (const { name, apikey } of created) expect(relistedKeys.get(name)).toBe(apikey);
      await app.close();
      app = undefined;

      const wrong = await loadedServices(opened.store, { ...keys, secretsKey: randomBytes(32) }).then(
        () => 'loaded',
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      expect(wrong).not.toBe('loaded');
    });
  });
});
