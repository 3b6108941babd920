// Webhook deliveries through changes of their webhook and instance, over HTTP with real receivers, on both stores: a
// URL fixed after failures, an instance deleted with deliveries owed, a name reused, the operator's global webhook,
// secrets removed, and headers that could not be sent.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../../src/platform/config.js';
import { startApp, startReceiver, storeTargets, type TestApp } from '../../support/harness.js';
import { waitFor } from '../../support/wait.js';

const targets = await storeTargets();

describe('WEBHOOK_SIGNING_SECRET', () => {
  it('is refused at start unless it can sign (whsec_ and at least 16 bytes), as instance secrets are', () => {
    for (const secret of ['whsec_a', 'whsec_ab=cd', 'plain']) {
      expect(() => loadConfig({ WEBHOOK_SIGNING_SECRET: secret }), secret).toThrow(ConfigError);
      expect(() => loadConfig({ WEBHOOK_SIGNING_SECRET: secret }), secret).toThrow(
        /WEBHOOK_SIGNING_SECRET must be whsec_ followed by at least 16 base64-encoded bytes/,
      );
    }
    expect(loadConfig({ WEBHOOK_SIGNING_SECRET: `whsec_${Buffer.alloc(24, 7).toString('base64')}` }).webhookSigningSecret).toMatch(/^whsec_/);
  });
});

describe.each(targets)('webhook lifecycle on $name', (target) => {
  describe.skipIf(!target.available)('deliveries', () => {
    let t: TestApp;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let global: Awaited<ReturnType<typeof startReceiver>>;

    beforeAll(async () => {
      // The instance receiver refuses everything under /down (a webhook pointed at the wrong place).
      receiver = await startReceiver((event) => (event.path.startsWith('/down') ? 503 : 200));
      global = await startReceiver();
      t = await startApp(target, {
        SANDBOX_AUTO_LINK: 'true',
        WEBHOOK_RETRY_MAX_ATTEMPTS: '3',
        WEBHOOK_GLOBAL_ENABLED: 'true',
        WEBHOOK_GLOBAL_URL: `${global.url}/operator?token=op-secret`,
      });
    });
    afterAll(async () => {
      await t?.close();
      await receiver?.close();
      await global?.close();
    });

    const inject = (name: string, text: string) => t.api('POST', `sandbox/inject/${name}`, { body: { from: '5511977770000', text } });
    const deliveries = async (name: string, key?: string) =>
      (await t.api('GET', `webhook/deliveries/${name}?limit=200`, key ? { key } : {})).body.deliveries as {
        id: number;
        event: string;
        target: string;
        url: string;
        status: string;
      }[];
    const upserts = (path: string) => receiver.events.filter((e) => e.path === path && e.body.event === 'messages.upsert');

    it('sends deliveries owed to a webhook to its fixed URL, dead ones too once redelivered', async () => {
      const created = await t.api('POST', 'instance/create', {
        body: { instanceName: 'fixme', integration: 'SANDBOX', number: '5511966660001', webhook: { url: `${receiver.url}/down`, events: ['MESSAGES_UPSERT'] } },
      });
      expect(created.status).toBe(201);
      expect((await inject('fixme', 'before the fix')).status).toBe(201);
      await waitFor(async () => (await deliveries('fixme')).find((d) => d.target === 'instance' && d.status === 'dead'));
      // The user fixes the URL; the dead delivery is replayed, and goes to the new address.
      expect((await t.api('POST', 'webhook/set/fixme', { body: { url: `${receiver.url}/up`, events: ['MESSAGES_UPSERT'] } })).status).toBe(201);
      const requeued = await t.api('POST', 'webhook/redeliver/fixme', { body: { status: 'dead' } });
      expect(requeued.body).toEqual({ requeued: 1 });
      await waitFor(() => upserts('/up').length === 1);
      expect(upserts('/up')[0].body.data.message).toEqual({ conversation: 'before the fix' });
      expect(upserts('/up')[0].body.destination).toBe(`${receiver.url}/up`);
      // The log shows where it went (once the answer is recorded: the receiver has the event a moment before).
      const logged = await waitFor(async () => {
        const rows = (await deliveries('fixme')).filter((d) => d.target === 'instance');
        return rows.every((d) => d.status === 'delivered') ? rows : undefined;
      });
      expect(logged).toEqual([expect.objectContaining({ status: 'delivered', url: `${receiver.url}/up` })]);
      // New events go straight to the fixed URL.
      await inject('fixme', 'after the fix');
      await waitFor(() => upserts('/up').length === 2);
    });

    it('still delivers the events of an instance being deleted to its webhook: logout and close included', async () => {
      const created = await t.api('POST', 'instance/create', {
        body: { instanceName: 'leaving', integration: 'SANDBOX', number: '5511966660002', webhook: { url: `${receiver.url}/leaving`, events: [] } },
      });
      expect(created.status).toBe(201);
      await waitFor(() => receiver.events.some((e) => e.path === '/leaving' && e.body.event === 'connection.update' && e.body.data.state === 'open'));
      expect((await t.api('DELETE', 'instance/delete/leaving')).status).toBe(200);
      const farewell = ['logout.instance', 'instance.delete', 'remove.instance'];
      await waitFor(() => farewell.every((name) => receiver.events.some((e) => e.path === '/leaving' && e.body.event === name)));
      const closes = receiver.events.filter((e) => e.path === '/leaving' && e.body.event === 'connection.update' && e.body.data.state === 'close');
      expect(closes.length).toBeGreaterThanOrEqual(1);
    });

    it('answers one of several concurrent deletes and writes the farewell events once', async () => {
      const created = await t.api('POST', 'instance/create', {
        body: { instanceName: 'twice', integration: 'SANDBOX', number: '5511966660015', webhook: { url: `${receiver.url}/twice`, events: [] } },
      });
      expect(created.status).toBe(201);
      await waitFor(() => receiver.events.some((e) => e.path === '/twice' && e.body.event === 'connection.update' && e.body.data.state === 'open'));
      const answers = await Promise.all(Array.from({ length: 8 }, () => t.api('DELETE', 'instance/delete/twice')));
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s !== 200).every((s) => s === 404)).toBe(true);
      for (const lost of answers.filter((a) => a.status === 404)) expect(JSON.stringify(lost.body)).toContain('does not exist');
      await waitFor(() => receiver.events.some((e) => e.path === '/twice' && e.body.event === 'remove.instance'));
      // A late duplicate would arrive within the same delivery round; give it time to show.
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (const name of ['instance.delete', 'remove.instance', 'logout.instance']) {
        expect(
          receiver.events.filter((e) => e.path === '/twice' && e.body.event === name),
          name,
        ).toHaveLength(1);
      }
    });

    it('leaves no event settings behind for an instance deleted while they were being set', async () => {
      for (let round = 0; round < 4; round++) {
        const name = `race-${round}`;
        expect((await t.api('POST', 'instance/create', { body: { instanceName: name } })).status).toBe(201);
        const [deleted, webhook, websocket] = await Promise.all([
          t.api('DELETE', `instance/delete/${name}`),
          t.api('POST', `webhook/set/${name}`, { body: { webhook: { enabled: true, url: `${receiver.url}/race`, events: [] } } }),
          t.api('POST', `websocket/set/${name}`, { body: { websocket: { enabled: true, events: [] } } }),
        ]);
        expect(deleted.status).toBe(200);
        for (const set of [webhook, websocket]) expect([201, 404]).toContain(set.status);
      }
      const db = t.services.store.db;
      const orphans = await db
        .selectFrom('event_sinks')
        .leftJoin('instances', 'instances.id', 'event_sinks.instance_id')
        .select('event_sinks.instance_id')
        .where('instances.id', 'is', null)
        .execute();
      expect(orphans).toEqual([]);
    });

    it('does not announce a logout when deleting an instance that was never linked', async () => {
      const created = await t.api('POST', 'instance/create', {
        body: { instanceName: 'unlinked-bye', webhook: { url: `${receiver.url}/unlinked-bye`, events: [] } },
      });
      expect(created.status).toBe(201);
      expect((await t.api('GET', 'instance/connectionState/unlinked-bye')).body.instance.state).toBe('close');
      expect((await t.api('DELETE', 'instance/delete/unlinked-bye')).status).toBe(200);
      await waitFor(() => receiver.events.some((e) => e.path === '/unlinked-bye' && e.body.event === 'remove.instance'));
      const names = receiver.events.filter((e) => e.path === '/unlinked-bye').map((e) => e.body.event);
      expect(names).not.toContain('logout.instance');
      expect(names.filter((n) => n === 'connection.update')).toEqual([]);
      expect(names).toEqual(expect.arrayContaining(['instance.create', 'instance.delete', 'remove.instance']));
    });

    it('keeps the delivery log of a deleted instance from a new instance of the same name', async () => {
      await t.api('POST', 'instance/create', {
        body: {
          instanceName: 'reused',
          integration: 'SANDBOX',
          number: '5511966660003',
          webhook: { url: `${receiver.url}/reused-old?token=old`, events: ['MESSAGES_UPSERT'] },
        },
      });
      await inject('reused', 'old life');
      await waitFor(() => receiver.events.some((e) => e.path.startsWith('/reused-old')));
      const old = (await deliveries('reused')).find((d) => d.target === 'instance')!;
      expect((await t.api('DELETE', 'instance/delete/reused')).status).toBe(200);
      const again = await t.api('POST', 'instance/create', { body: { instanceName: 'reused', integration: 'SANDBOX', number: '5511966660004' } });
      const newKey = again.body.hash.apikey as string;
      const seen = await deliveries('reused', newKey);
      expect(seen.map((d) => d.id)).not.toContain(old.id);
      expect(JSON.stringify(seen)).not.toContain('token=old');
      expect((await t.api('POST', 'webhook/redeliver/reused', { key: newKey, body: { deliveryId: old.id } })).status).toBe(404);
    });

    it("shows and replays the global webhook's deliveries to the global key only", async () => {
      const created = await t.api('POST', 'instance/create', { body: { instanceName: 'tenant', integration: 'SANDBOX', number: '5511966660005' } });
      const key = created.body.hash.apikey as string;
      await inject('tenant', 'to the operator');
      await waitFor(() => global.events.some((e) => e.body.instance === 'tenant' && e.body.event === 'messages.upsert'));
      const asOperator = await deliveries('tenant');
      const globalRow = asOperator.find((d) => d.target === 'global' && d.event === 'MESSAGES_UPSERT')!;
      expect(globalRow.url).toContain('token=op-secret');
      const asTenant = await deliveries('tenant', key);
      expect(asTenant.filter((d) => d.target === 'global')).toEqual([]);
      expect(JSON.stringify(asTenant)).not.toContain('op-secret');
      expect((await t.api('POST', 'webhook/redeliver/tenant', { key, body: { deliveryId: globalRow.id } })).status).toBe(404);
      const before = global.events.length;
      expect((await t.api('POST', 'webhook/redeliver/tenant', { body: { deliveryId: globalRow.id } })).body).toEqual({ requeued: 1 });
      await waitFor(() => global.events.length > before);
    });

    it('removes a webhook secret with null or "": deliveries go unsigned again', async () => {
      const secret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
      await t.api('POST', 'instance/create', {
        body: {
          instanceName: 'signer',
          integration: 'SANDBOX',
          number: '5511966660006',
          webhook: { url: `${receiver.url}/signed`, events: ['MESSAGES_UPSERT'], secret },
        },
      });
      await inject('signer', 'signed');
      await waitFor(() => upserts('/signed').length === 1);
      const signed = upserts('/signed')[0];
      const expected = createHmac('sha256', Buffer.alloc(32, 9))
        .update(`${signed.headers['webhook-id']}.${signed.headers['webhook-timestamp']}.${JSON.stringify(signed.body)}`)
        .digest('base64');
      expect(signed.headers['webhook-signature']).toBe(`v1,${expected}`);
      for (const removal of [null, '']) {
        const set = await t.api('POST', 'webhook/set/signer', { body: { url: `${receiver.url}/signed`, events: ['MESSAGES_UPSERT'], secret: removal } });
        expect(set.status).toBe(201);
        expect(set.body.webhook.webhook.signed).toBe(false);
      }
      expect((await t.api('GET', 'webhook/find/signer')).body.signed).toBe(false);
      await inject('signer', 'unsigned');
      await waitFor(() => upserts('/signed').length === 2);
      expect(upserts('/signed')[1].headers['webhook-signature']).toBeUndefined();
      const bad = await t.api('POST', 'webhook/set/signer', { body: { url: `${receiver.url}/signed`, secret: 'whsec_a' } });
      expect(bad.status).toBe(400);
      expect(bad.body.response.message[0]).toMatch(/secret must be whsec_ followed by at least 16 base64-encoded bytes; null or "" removes it/);
    });

    it('refuses custom headers that could not be sent, naming them, and keeps the webhook as it was', async () => {
      await t.api('POST', 'instance/create', { body: { instanceName: 'headed', webhook: { url: `${receiver.url}/headed`, headers: { 'X-Ok': 'y' } } } });
      const cases: [Record<string, string>, RegExp][] = [
        [{ 'Bad Header': 'x' }, /headers: "Bad Header" is not a valid header name/],
        [{ 'Content-Type': 'text/plain' }, /headers: "Content-Type" is always application\/json/],
        [{ Host: 'elsewhere.example' }, /headers: "Host" is set by Switchboard itself/],
        [{ 'X-Split': 'a\r\nb' }, /headers: "X-Split" has a line break/],
      ];
      for (const [headers, message] of cases) {
        const res = await t.api('POST', 'webhook/set/headed', { body: { webhook: { url: `${receiver.url}/headed`, headers } } });
        expect(res.status, JSON.stringify(headers)).toBe(400);
        expect(res.body.response.message[0]).toMatch(message);
      }
      expect((await t.api('GET', 'webhook/find/headed')).body.headers).toEqual({ 'X-Ok': '[redacted]' });
    });

    it('keeps what a webhook/set leaves out, puts the event suffix before the query, and names the webhook as destination', async () => {
      const url = `${receiver.url}/kept?token=abc`;
      const created = await t.api('POST', 'instance/create', {
        body: {
          instanceName: 'kept',
          integration: 'SANDBOX',
          number: '5511966660017',
          webhook: { url, byEvents: true, base64: true, headers: { autorization: 'Bearer k' }, events: ['MESSAGES_UPSERT'] },
        },
      });
      expect(created.status).toBe(201);
      // The interface's webhook/set body has no headers: the ones given at creation stay, and so do byEvents and base64.
      const set = await t.api('POST', 'webhook/set/kept', { body: { webhook: { enabled: true, url, events: ['MESSAGES_UPSERT'] } } });
      expect(set.status).toBe(201);
      expect(set.body.webhook.webhook).toMatchObject({ webhookByEvents: true, webhookBase64: true });
      expect((await t.api('GET', 'webhook/find/kept')).body).toMatchObject({
        headers: { autorization: '[redacted]' },
        webhookByEvents: true,
        webhookBase64: true,
      });
      await inject('kept', 'kept headers');
      await waitFor(() => upserts('/kept/messages-upsert?token=abc').length === 1);
      const [delivered] = upserts('/kept/messages-upsert?token=abc');
      expect(delivered.headers.autorization).toBe('Bearer k');
      // destination: the webhook's URL (not the by-events one), the same on the global copy.
      expect(delivered.body.destination).toBe(url);
      const copy = await waitFor(() => global.events.find((e) => e.body.instance === 'kept' && e.body.event === 'messages.upsert'));
      expect(copy.body.destination).toBe(url);
      // Given explicitly, they change.
      await t.api('POST', 'webhook/set/kept', {
        body: { webhook: { enabled: true, url, headers: {}, byEvents: false, base64: false, events: ['MESSAGES_UPSERT'] } },
      });
      expect((await t.api('GET', 'webhook/find/kept')).body).toMatchObject({ headers: {}, webhookByEvents: false, webhookBase64: false });
    });

    it('sends the credentials of a webhook URL as basic authentication, unless the headers carry their own', async () => {
      const withCredentials = receiver.url.replace('http://', 'http://hook-user:p%40ss@');
      const created = await t.api('POST', 'instance/create', {
        body: {
          instanceName: 'basic',
          integration: 'SANDBOX',
          number: '5511966660018',
          webhook: { url: `${withCredentials}/basic`, events: ['MESSAGES_UPSERT'] },
        },
      });
      expect(created.status).toBe(201);
      await inject('basic', 'with credentials');
      await waitFor(() => upserts('/basic').length === 1);
      expect(upserts('/basic')[0].headers.authorization).toBe(`Basic ${Buffer.from('hook-user:p@ss').toString('base64')}`);
      // The password is not shown again: not in the envelope, webhook/find or the delivery log.
      const hidden = receiver.url.replace('http://', 'http://hook-user:***@');
      expect(upserts('/basic')[0].body.destination).toBe(`${hidden}/basic`);
      const found = (await t.api('GET', 'webhook/find/basic')).body;
      expect(found.url).toBe(`${hidden}/basic`);
      expect((await deliveries('basic')).every((d) => !d.url.includes('p%40ss'))).toBe(true);
      // Sent back as shown (a read-modify-write client), the stored password stays.
      await t.api('POST', 'webhook/set/basic', { body: { webhook: { ...found, enabled: true, headers: undefined } } });
      await inject('basic', 'after a round trip');
      await waitFor(() => upserts('/basic').length === 2);
      expect(upserts('/basic')[1].headers.authorization).toBe(`Basic ${Buffer.from('hook-user:p@ss').toString('base64')}`);
      await t.api('POST', 'webhook/set/basic', {
        body: { webhook: { enabled: true, url: `${withCredentials}/basic`, headers: { Authorization: 'Bearer own' }, events: ['MESSAGES_UPSERT'] } },
      });
      await inject('basic', 'own header');
      await waitFor(() => upserts('/basic').length === 3);
      expect(upserts('/basic')[2].headers.authorization).toBe('Bearer own');
    });

    it("accepts the interface's documented webhook headers at creation, Content-Type included", async () => {
      const created = await t.api('POST', 'instance/create', {
        body: {
          instanceName: 'documented',
          integration: 'SANDBOX',
          number: '5511966660016',
          webhook: {
            url: `${receiver.url}/documented`,
            byEvents: false,
            base64: true,
            headers: { autorization: 'Bearer x', 'Content-Type': 'application/json' },
            events: ['MESSAGES_UPSERT'],
          },
        },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await inject('documented', 'with headers');
      await waitFor(() => upserts('/documented').length === 1);
      const [delivered] = upserts('/documented');
      expect(delivered.headers.autorization).toBe('Bearer x');
      expect(delivered.headers['content-type']).toBe('application/json');
    });
  });
});
