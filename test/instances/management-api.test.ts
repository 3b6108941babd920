// Instance management, authentication, settings, webhook/websocket configuration and errors, over HTTP on both stores.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { linkedSandbox, startApp, startReceiver, storeTargets, type TestApp } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

const targets = await storeTargets();

describe.each(targets)('API on $name', (target) => {
  describe.skipIf(!target.available)('instances and auth', () => {
    let t: TestApp;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;

    beforeAll(async () => {
      t = await startApp(target);
      receiver = await startReceiver();
    });
    afterAll(async () => {
      await t?.close();
      await receiver?.close();
    });

    it('creates an instance with the interface shape and stores it', async () => {
      const res = await t.api('POST', 'instance/create', {
        body: {
          instanceName: 'shop-1',
          qrcode: false,
          rejectCall: true,
          msgCall: 'busy',
          webhook: { url: `${receiver.url}/hook`, byEvents: false, base64: false, events: [] },
        },
      });
      expect(res.status).toBe(201);
      expect(res.body.instance).toMatchObject({
        instanceName: 'shop-1',
        status: 'created',
        webhook_wa_business: null,
        access_token_wa_business: '',
      });
      expect(res.body.instance.instanceId).toMatch(/^[0-9a-f-]{36}$/);
      expect(typeof res.body.hash.apikey).toBe('string');
      expect(res.body.hash.apikey.length).toBeGreaterThanOrEqual(24);
      expect(res.body.settings).toEqual({
        reject_call: true,
        msg_call: 'busy',
        groups_ignore: false,
        always_online: false,
        read_messages: false,
        read_status: false,
        sync_full_history: false,
      });
      const row = await t.services.store.db.selectFrom('instances').selectAll().where('name', '=', 'shop-1').executeTakeFirstOrThrow();
      expect(row.integration).toBe('WHATSAPP-BAILEYS');
      expect(row.reject_call).toBe(1);
      // The key is kept sealed and hashed, never in plain text.
      expect(row.apikey_sealed).not.toContain(res.body.hash.apikey);
      expect(row.apikey_hash).not.toBe(res.body.hash.apikey);
      // A webhook given at creation receives the instance's very first event.
      await receiver.waitFor((events) => events.some((e) => e.body.event === 'instance.create' && e.body.instance === 'shop-1'));
      const created = receiver.of('instance.create', 'shop-1')[0].body;
      expect(created.data).toEqual({ instanceName: 'shop-1', instanceId: res.body.instance.instanceId });
      expect(created.apikey).toBeNull();
      expect(typeof created.id).toBe('string');
      expect(new Date(created.date_time).toISOString()).toBe(created.date_time);
    });

    it('refuses bad creation input with messages naming the field', async () => {
      const cases: [unknown, number, RegExp][] = [
        [{ instanceName: 'bad name' }, 400, /instanceName may contain only/],
        [{ instanceName: '.hidden' }, 400, /must start with a letter or a digit/],
        [{ instanceName: 'x'.repeat(65) }, 400, /at most 64/],
        [{}, 400, /instanceName is required/],
        [{ instanceName: 'ok-1', qrcode: 'true' }, 400, /qrcode must be a boolean/],
        [{ instanceName: 'ok-2', integration: 'TELEGRAM' }, 400, /integration must be one of: WHATSAPP-BAILEYS, WHATSAPP-BUSINESS, EVOLUTION, SANDBOX/],
        [{ instanceName: 'ok-3', token: 'short' }, 400, /token must be at least 16 characters/],
        [{ instanceName: 'ok-4', webhook: { url: 'ftp://x' } }, 400, /webhook.url must be an absolute http/],
        [{ instanceName: 'ok-5', webhook: { url: 'http://169.254.169.254/latest' } }, 400, /forbidden address/],
        [{ instanceName: 'ok-6', webhook: { url: 'http://example.com', events: ['NOPE'] } }, 400, /"NOPE" is not an event name/],
        [{ instanceName: 'shop-1' }, 403, /already in use/],
      ];
      for (const [body, status, message] of cases) {
        const res = await t.api('POST', 'instance/create', { body });
        expect(res.status, JSON.stringify(body)).toBe(status);
        expect(res.body.error).toBe(status === 400 ? 'Bad Request' : 'Forbidden');
        expect(res.body.response.message.join(' ')).toMatch(message);
      }
      const names = (await t.api('GET', 'instance/fetchInstances')).body.map((i: { instance: { instanceName: string } }) => i.instance.instanceName);
      expect(names).toEqual(['shop-1']);
    });

    it('answers 415 for non-JSON bodies and 400 for broken JSON', async () => {
      const text = await t.api('POST', 'instance/create', { body: 'instanceName=x', headers: { 'content-type': 'text/plain' } });
      expect(text.status).toBe(415);
      expect(text.body.response.message[0]).toMatch(/application\/json/);
      const broken = await t.api('POST', 'instance/create', { body: '{"instanceName":', headers: { 'content-type': 'application/json' } });
      expect(broken.status).toBe(400);
      expect(broken.body.response.message[0]).toMatch(/not valid JSON/);
      const unknown = await t.api('GET', 'nothing/here');
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ status: 404, error: 'Not Found', response: { message: ['Cannot GET /messenger/nothing/here'] } });
    });

    it('applies the auth matrix: global, own key, foreign key, none, wrong', async () => {
      const a = await t.api('POST', 'instance/create', { body: { instanceName: 'auth-a' } });
      const b = await t.api('POST', 'instance/create', { body: { instanceName: 'auth-b' } });
      const keyA = a.body.hash.apikey;
      const keyB = b.body.hash.apikey;
      expect((await t.api('GET', 'instance/connectionState/auth-a')).status).toBe(200);
      expect((await t.api('GET', 'instance/connectionState/auth-a', { key: keyA })).body).toEqual({
        instance: { instanceName: 'auth-a', state: 'close' },
      });
      const foreign = await t.api('GET', 'instance/connectionState/auth-a', { key: keyB });
      expect(foreign.status).toBe(403);
      const none = await t.api('GET', 'instance/connectionState/auth-a', { key: null });
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ status: 401, error: 'Unauthorized', response: { message: ['Unauthorized'] } });
      expect((await t.api('GET', 'instance/connectionState/auth-a', { key: 'wrong-key' })).status).toBe(401);
      // Unknown names answer like foreign ones to an instance key, so names cannot be probed.
      const ghost = await t.api('GET', 'instance/connectionState/ghost', { key: keyB });
      expect(ghost.status).toBe(403);
      expect(ghost.body.error).toBe(foreign.body.error);
      expect((await t.api('GET', 'instance/connectionState/ghost', { key: null })).status).toBe(401);
      expect((await t.api('GET', 'instance/connectionState/ghost')).status).toBe(404);
      // Creation needs the global key.
      expect((await t.api('POST', 'instance/create', { key: keyA, body: { instanceName: 'sneaky' } })).status).toBe(403);
      expect((await t.api('POST', 'instance/create?x=/instance/fetchInstances', { key: keyA, body: { instanceName: 'sneaky' } })).status).toBe(403);
      // fetchInstances with an instance key lists that instance only.
      const own = await t.api('GET', 'instance/fetchInstances', { key: keyA });
      expect(own.status).toBe(200);
      expect(own.body).toHaveLength(1);
      expect(own.body[0].instance).toMatchObject({ instanceName: 'auth-a', apikey: keyA, status: 'close', integration: { integration: 'WHATSAPP-BAILEYS' } });
      expect((await t.api('GET', 'instance/fetchInstances?instanceName=auth-b', { key: keyA })).status).toBe(403);
    });

    it('lists and filters instances by instanceName and instanceId', async () => {
      const all = await t.api('GET', 'instance/fetchInstances');
      expect(all.status).toBe(200);
      const names = all.body.map((i: { instance: { instanceName: string } }) => i.instance.instanceName);
      expect(names).toEqual(expect.arrayContaining(['shop-1', 'auth-a', 'auth-b']));
      const first = all.body[0].instance;
      expect(first).toMatchObject({ serverUrl: t.url });
      expect(typeof first.apikey).toBe('string');
      const byName = await t.api('GET', 'instance/fetchInstances?instanceName=auth-b');
      expect(byName.body).toHaveLength(1);
      const byId = await t.api('GET', `instance/fetchInstances?instanceId=${byName.body[0].instance.instanceId}`);
      expect(byId.body[0].instance.instanceName).toBe('auth-b');
      expect((await t.api('GET', 'instance/fetchInstances?instanceName=nobody')).status).toBe(404);
    });

    it('sets and finds settings; rejects strings for booleans', async () => {
      const res = await t.api('POST', 'settings/set/auth-a', {
        body: { rejectCall: true, msgCall: 'later', groupsIgnore: true, alwaysOnline: false, readMessages: true, readStatus: false, syncFullHistory: false },
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        settings: {
          instanceName: 'auth-a',
          settings: { reject_call: true, groups_ignore: true, always_online: false, read_messages: true, read_status: false, sync_full_history: false },
        },
      });
      const found = await t.api('GET', 'settings/find/auth-a');
      expect(found.body).toMatchObject({ rejectCall: true, msgCall: 'later', groupsIgnore: true, readMessages: true });
      const bad = await t.api('POST', 'settings/set/auth-a', { body: { rejectCall: 'yes' } });
      expect(bad.status).toBe(400);
      expect(bad.body.response.message).toEqual(['rejectCall must be a boolean']);
      const row = await t.services.store.db.selectFrom('instances').select(['reject_call', 'msg_call']).where('name', '=', 'auth-a').executeTakeFirstOrThrow();
      expect(row).toEqual({ reject_call: 1, msg_call: 'later' });
    });

    it('sets the webhook wrapped or flat, finds it, and lists its deliveries', async () => {
      const wrapped = await t.api('POST', 'webhook/set/auth-a', {
        body: {
          webhook: {
            enabled: true,
            url: `${receiver.url}/a`,
            byEvents: true,
            base64: false,
            events: ['MESSAGES_UPSERT', 'connection.update'],
            headers: { autorization: 'Bearer x' },
          },
        },
      });
      expect(wrapped.status).toBe(201);
      expect(wrapped.body.webhook).toMatchObject({
        instanceName: 'auth-a',
        webhook: { url: `${receiver.url}/a`, events: ['MESSAGES_UPSERT', 'CONNECTION_UPDATE'], enabled: true, webhookByEvents: true },
      });
      const flat = await t.api('POST', 'webhook/set/auth-b', {
        body: { enabled: true, url: `${receiver.url}/b`, webhookByEvents: false, webhookBase64: true, events: [] },
      });
      expect(flat.status).toBe(201);
      const found = await t.api('GET', 'webhook/find/auth-a');
      expect(found.body).toMatchObject({ enabled: true, url: `${receiver.url}/a`, webhookByEvents: true, headers: { autorization: '[redacted]' } });
      expect((await t.api('GET', 'webhook/find/shop-1')).body).toMatchObject({ url: `${receiver.url}/hook` });
      const missingUrl = await t.api('POST', 'webhook/set/auth-a', { body: { webhook: { enabled: true } } });
      expect(missingUrl.status).toBe(400);
      expect(missingUrl.body.response.message[0]).toMatch(/webhook.url is required/);
      const badSecret = await t.api('POST', 'webhook/set/auth-a', { body: { webhook: { enabled: true, url: receiver.url, secret: 'plain' } } });
      expect(badSecret.status).toBe(400);

      const log = await t.api('GET', 'webhook/deliveries/shop-1?limit=10');
      expect(log.status).toBe(200);
      expect(log.body.deliveries.length).toBeGreaterThan(0);
      expect(log.body.deliveries[0]).toMatchObject({ status: expect.any(String), attempts: expect.any(Number) });
      expect((await t.api('GET', 'webhook/deliveries/shop-1?limit=0')).status).toBe(400);
      expect((await t.api('GET', 'webhook/deliveries/shop-1?cursor=garbage')).status).toBe(400);
      expect((await t.api('POST', 'webhook/redeliver/shop-1', { body: { deliveryId: 999999 } })).status).toBe(404);
      expect((await t.api('POST', 'webhook/redeliver/shop-1', { body: {} })).status).toBe(400);
    });

    it('sets and finds the websocket configuration', async () => {
      const res = await t.api('POST', 'websocket/set/auth-a', { body: { websocket: { enabled: true, events: ['MESSAGES_UPSERT'] } } });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ websocket: { instanceName: 'auth-a', websocket: { enabled: true, events: ['MESSAGES_UPSERT'] } } });
      expect((await t.api('GET', 'websocket/find/auth-a')).body).toEqual({ enabled: true, events: ['MESSAGES_UPSERT'] });
      expect((await t.api('GET', 'websocket/find/auth-b')).body).toBeNull();
      const bad = await t.api('POST', 'websocket/set/auth-a', { body: { websocket: { events: [] } } });
      expect(bad.status).toBe(400);
      expect(bad.body.response.message).toEqual(['websocket.enabled is required']);
    });

    it('connects, reports state, logs out and restarts a sandbox instance', async () => {
      const created = await t.api('POST', 'instance/create', { body: { instanceName: 'sbx-life', integration: 'SANDBOX' } });
      expect(created.status).toBe(201);
      expect(created.body.qrcode).toBeUndefined();
      expect((await t.api('DELETE', 'instance/logout/sbx-life')).status).toBe(400);
      const qr = await t.api('GET', 'instance/connect/sbx-life');
      expect(qr.status).toBe(200);
      expect(qr.body.base64).toMatch(/^data:image\/png;base64,/);
      expect(qr.body.count).toBe(1);
      const connecting = await t.api('GET', 'instance/connectionState/sbx-life');
      expect(connecting.body).toEqual({ instance: { instanceName: 'sbx-life', state: 'connecting' } });
      const expired = await t.api('POST', 'sandbox/scan', { body: { code: 'sbx_nope', number: '5511900001111' } });
      expect(expired.status).toBe(400);
      const scan = await t.api('POST', 'sandbox/scan', { body: { code: qr.body.code, number: '+55 11 90000-1111', profileName: 'Life' } });
      expect(scan.status).toBe(200);
      expect(scan.body).toEqual({ instance: { instanceName: 'sbx-life', status: 'open', owner: '5511900001111@s.whatsapp.net' } });
      expect((await t.api('GET', 'instance/connect/sbx-life')).body).toEqual({ instance: { instanceName: 'sbx-life', state: 'open' } });
      // Once linked, the state says when the connection last heard from the network.
      const open = await t.api('GET', 'instance/connectionState/sbx-life');
      expect(open.body.instance.state).toBe('open');
      expect(Date.now() - Date.parse(open.body.instance.lastActivityAt)).toBeLessThan(60_000);
      const listed = await t.api('GET', 'instance/fetchInstances?instanceName=sbx-life');
      expect(listed.body[0].instance).toMatchObject({ status: 'open', owner: '5511900001111@s.whatsapp.net', profileName: 'Life' });
      expect((await t.api('POST', 'instance/restart/sbx-life')).body).toEqual({ instance: { instanceName: 'sbx-life', state: 'open' } });
      const logout = await t.api('DELETE', 'instance/logout/sbx-life');
      expect(logout.body).toEqual({ status: 'SUCCESS', error: false, response: { message: 'Instance logged out' } });
      expect((await t.api('GET', 'instance/connectionState/sbx-life')).body.instance.state).toBe('close');
      const session = await t.services.store.db.selectFrom('sessions').selectAll().where('instance_id', '=', created.body.instance.instanceId).execute();
      expect(session).toEqual([]);
    });

    it('a sandbox logout whose store write fails keeps the session and the link: nothing half done, no logout event', async () => {
      const { id: instanceId } = await linkedSandbox(t, 'sbx-half', '5511900001212');
      const hook = await t.api('POST', 'webhook/set/sbx-half', {
        body: { webhook: { enabled: true, url: `${receiver.url}/half`, events: ['LOGOUT_INSTANCE', 'CONNECTION_UPDATE'] } },
      });
      expect(hook.status).toBe(201);
      const sessionOf = () => t.services.store.db.selectFrom('sessions').select('instance_id').where('instance_id', '=', instanceId).execute();
      expect(await sessionOf()).toHaveLength(1);
      const registry = t.services.registry;
      const failing = vi.spyOn(registry, 'updateConnection').mockRejectedValueOnce(new Error('store write failed (injected)'));
      try {
        const logout = await t.api('DELETE', 'instance/logout/sbx-half');
        expect(logout.status).toBeGreaterThanOrEqual(500);
      } finally {
        failing.mockRestore();
      }
      expect(await sessionOf()).toHaveLength(1);
      // Still linked in the store: opened again (a restart) it comes back with its account.
      const row = await t.services.store.db.selectFrom('instances').select('owner_jid').where('id', '=', instanceId).executeTakeFirstOrThrow();
      expect(row.owner_jid).toBe('5511900001212@s.whatsapp.net');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(receiver.of('logout.instance', 'sbx-half')).toEqual([]);
    });

    it('runs an EVOLUTION instance as upstream: open at once, sends recorded and announced, nothing delivered', async () => {
      const created = await t.api('POST', 'instance/create', {
        body: { instanceName: 'evo-1', integration: 'EVOLUTION', webhook: { url: `${receiver.url}/evo`, events: ['SEND_MESSAGE', 'CONNECTION_UPDATE'] } },
      });
      expect(created.status).toBe(201);
      expect((await t.api('GET', 'instance/connectionState/evo-1')).body).toEqual({ instance: { instanceName: 'evo-1', state: 'open' } });
      const sent = await t.api('POST', 'message/sendText/evo-1', { body: { number: '5511955554444', text: 'recorded' } });
      expect(sent.status).toBe(201);
      await receiver.waitFor((events) => events.some((e) => e.body.event === 'send.message' && e.body.data.key.id === sent.body.key.id));
      const announced = receiver.of('send.message', 'evo-1')[0].body.data;
      expect(announced).toMatchObject({ key: { remoteJid: '5511955554444@s.whatsapp.net', fromMe: true }, message: { conversation: 'recorded' } });
      expect(receiver.of('connection.update', 'evo-1')[0].body.data).toMatchObject({ state: 'open' });
      // send.message goes out as the send leaves the queue; SERVER_ACK is stored by the write that follows.
      const status = async () =>
        (await t.services.store.db.selectFrom('messages').select('status').where('key_id', '=', sent.body.key.id).executeTakeFirstOrThrow()).status;
      expect(await waitFor(async () => ((await status()) === 'SERVER_ACK' ? 'SERVER_ACK' : undefined))).toBe('SERVER_ACK');
    });

    it('deletes an instance with everything stored for it', async () => {
      const a = await linkedSandbox(t, 'del-a', '5511900002222');
      await linkedSandbox(t, 'del-b', '5511900003333');
      await t.api('POST', 'webhook/set/del-a', { body: { webhook: { enabled: true, url: `${receiver.url}/del`, events: [] } } });
      const sent = await t.api('POST', 'message/sendText/del-a', { body: { number: '5511900003333', text: 'bye' } });
      expect(sent.status).toBe(201);
      const res = await t.api('DELETE', 'instance/delete/del-a', { key: a.apikey });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'SUCCESS', error: false, response: { message: 'Instance deleted' } });
      const db = t.services.store.db;
      for (const table of ['messages', 'send_queue', 'event_sinks', 'sessions', 'message_status'] as const) {
        const rows = await db.selectFrom(table).select('instance_id').where('instance_id', '=', a.id).execute();
        expect(rows, table).toEqual([]);
      }
      expect(await db.selectFrom('instances').select('id').where('id', '=', a.id).execute()).toEqual([]);
      // Its own webhook still hears of the deletion (as Evolution's does), with the settings it had.
      await receiver.waitFor((events) => events.some((e) => e.body.event === 'remove.instance' && e.body.instance === 'del-a'));
      const farewell = receiver.of('instance.delete', 'del-a');
      expect(farewell).toHaveLength(1);
      expect(farewell[0].path).toBe('/del');
      expect(farewell[0].body.data).toEqual({ instanceName: 'del-a', instanceId: a.id });
      expect((await t.api('GET', 'instance/connectionState/del-a')).status).toBe(404);
      expect((await t.api('GET', 'instance/connectionState/del-a', { key: a.apikey })).status).toBe(401);
    });

    it('serves health, the status answer and the OpenAPI document', async () => {
      const root = await t.api('GET', '/', { key: null });
      expect(root.body).toMatchObject({ status: 200, version: expect.any(String) });
      expect((await t.api('GET', '/health', { key: null })).body).toMatchObject({ status: 'ok', store: target.name });
      const doc = await t.api('GET', 'docs/json', { key: null });
      expect(doc.status).toBe(200);
      expect(doc.body.openapi).toMatch(/^3\./);
      for (const path of [
        '/messenger/instance/create',
        '/messenger/message/sendMedia/{instance}',
        '/messenger/chat/sendPresence/{instance}',
        '/messenger/sandbox/scan',
      ]) {
        expect(Object.keys(doc.body.paths)).toContain(path);
      }
      // Routes that answer 201 say so (not Fastify's default 200).
      for (const path of [
        '/messenger/instance/create',
        '/messenger/settings/set/{instance}',
        '/messenger/webhook/set/{instance}',
        '/messenger/chat/sendPresence/{instance}',
        '/messenger/sandbox/inject/{instance}',
      ]) {
        expect(
          Object.keys(doc.body.paths[path].post.responses).filter((code) => code.startsWith('2')),
          path,
        ).toEqual(['201']);
      }
      // Error answers are documented with the envelope; public routes need no key.
      const sendText = doc.body.paths['/messenger/message/sendText/{instance}'].post;
      expect(Object.keys(sendText.responses)).toEqual(expect.arrayContaining(['400', '401', '403', '404', '413', '415']));
      const envelopeOf = (answer: { content: Record<string, { schema: { properties: Record<string, unknown> } }> }) =>
        Object.keys(answer.content['application/json'].schema.properties);
      expect(envelopeOf(sendText.responses['404'])).toEqual(['status', 'error', 'response']);
      expect(doc.body.paths['/messenger/sandbox/media/{file}'].get.security).toEqual([]);
      expect(Object.keys(doc.body.paths['/messenger/sandbox/media/{file}'].get.responses)).not.toContain('401');
      const page = await t.api('GET', 'docs/', { key: null });
      expect(page.status).toBe(200);
      expect(String(page.body)).toContain('<html');
    });
  });
});
