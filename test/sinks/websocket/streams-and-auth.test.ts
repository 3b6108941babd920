// socket.io websocket: per-instance namespaces, the global stream, handshake auth and refusals, on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachWebsocket, type WebsocketHandle, type WebsocketPayload } from '../../../src/sinks/websocket/index.js';
import { linkedSandbox, startApp, storeTargets, type TestApp } from '../../support/harness.js';
import { waitFor } from '../../support/wait.js';
import { client, connected, type Client } from '../../support/websocket-client.js';

const targets = await storeTargets();

const envelopeKeys = ['apikey', 'data', 'date_time', 'event', 'id', 'instance', 'sender', 'server_url'];

type ConnectError = Error & { data?: { status?: number } };

function refused(c: Client): Promise<ConnectError> {
  return new Promise((resolve, reject) => {
    c.socket.once('connect', () => reject(new Error('expected connect_error, but the client connected')));
    c.socket.once('connect_error', (err) => resolve(err as ConnectError));
  });
}

async function waitForPayload(c: Client, predicate: (p: WebsocketPayload) => boolean, timeoutMs = 5000): Promise<WebsocketPayload> {
  return waitFor(() => c.received.find(predicate), timeoutMs);
}

async function enableWebsocket(t: TestApp, name: string, events: string[], key?: string) {
  const res = await t.api('POST', `websocket/set/${name}`, { body: { websocket: { enabled: true, events } }, key });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

async function inject(t: TestApp, name: string, text: string) {
  const res = await t.api('POST', `sandbox/inject/${name}`, { body: { from: '5511911112222', text } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

const isUpsertOf = (text: string) => (p: WebsocketPayload) => p.event === 'messages.upsert' && JSON.stringify(p.data).includes(text);

describe.each(targets)('websocket on $name', (target) => {
  describe.skipIf(!target.available)(`per-instance namespaces, global stream and auth (${target.name})`, () => {
    let t: TestApp;
    let ws: WebsocketHandle;
    const clients: Client[] = [];
    let alpha: Awaited<ReturnType<typeof linkedSandbox>>;
    let beta: Awaited<ReturnType<typeof linkedSandbox>>;
    const open = (...args: Parameters<typeof client>) => {
      const c = client(...args);
      clients.push(c);
      return c;
    };

    beforeAll(async () => {
      t = await startApp(target);
      ws = attachWebsocket(t.app, t.services, { enabled: true, globalEvents: true });
      alpha = await linkedSandbox(t, 'ws-alpha', '5511900000001');
      beta = await linkedSandbox(t, 'ws-beta', '5511900000002');
    });
    afterAll(async () => {
      for (const c of clients) c.socket.close();
      await ws?.close();
      await t?.close();
    });

    it('an instance key joins its own namespace before any event and gets messages.upsert as the envelope without destination', async () => {
      await enableWebsocket(t, 'ws-alpha', ['MESSAGES_UPSERT'], alpha.apikey);
      const found = await t.api('GET', 'websocket/find/ws-alpha', { key: alpha.apikey });
      expect(found.status).toBe(200);
      expect(found.body).toEqual({ enabled: true, events: ['MESSAGES_UPSERT'] });

      const c = open(t.url, '/ws-alpha', { auth: { apikey: alpha.apikey } });
      await connected(c);
      await inject(t, 'ws-alpha', 'hi');
      const upsert = await waitForPayload(c, isUpsertOf('hi'));
      expect(Object.keys(upsert).sort()).toEqual(envelopeKeys);
      expect(upsert).not.toHaveProperty('destination');
      expect(upsert).toMatchObject({ event: 'messages.upsert', instance: 'ws-alpha', sender: alpha.owner, server_url: t.url, apikey: null });
      expect(upsert.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(upsert.date_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      expect(JSON.stringify(upsert.data)).toContain('5511911112222');
    });

    it('the instance filter holds: connection.update is not sent when only MESSAGES_UPSERT is subscribed', async () => {
      const c = open(t.url, '/ws-alpha', { auth: { apikey: alpha.apikey } });
      const global = open(t.url, '/', { auth: { apikey: t.globalKey } });
      await Promise.all([connected(c), connected(global)]);
      const restarted = await t.api('POST', 'instance/restart/ws-alpha');
      expect(restarted.status, JSON.stringify(restarted.body)).toBeLessThan(300);
      // The event did happen (the unfiltered global stream saw it) ...
      await waitForPayload(global, (p) => p.event === 'connection.update' && p.instance === 'ws-alpha');
      await waitFor(async () => (await t.api('GET', 'instance/connectionState/ws-alpha')).body?.instance?.state === 'open');
      await inject(t, 'ws-alpha', 'after restart');
      await waitForPayload(c, isUpsertOf('after restart'));
      // ... but the namespace, filtered to MESSAGES_UPSERT, only got the message.
      expect(c.received.map((p) => p.event)).toEqual(['messages.upsert']);
    });

    it('the key is also accepted from the query string and the apikey header', async () => {
      const viaQuery = open(t.url, '/ws-alpha', { query: { apikey: alpha.apikey } });
      const viaHeader = open(t.url, '/ws-alpha', { extraHeaders: { apikey: alpha.apikey } });
      await Promise.all([connected(viaQuery), connected(viaHeader)]);
      await inject(t, 'ws-alpha', 'three ways');
      await waitForPayload(viaQuery, isUpsertOf('three ways'));
      await waitForPayload(viaHeader, isUpsertOf('three ways'));
    });

    it('global mode: a global-key client on "/" gets every event of every instance, unfiltered', async () => {
      const global = open(t.url, '/', { auth: { apikey: t.globalKey } });
      await connected(global);
      await inject(t, 'ws-alpha', 'to alpha');
      await inject(t, 'ws-beta', 'to beta');
      const a = await waitForPayload(global, isUpsertOf('to alpha'));
      const b = await waitForPayload(global, isUpsertOf('to beta'));
      expect(a.instance).toBe('ws-alpha');
      expect(b.instance).toBe('ws-beta');
      expect(b).not.toHaveProperty('destination');
      // beta has no websocket settings at all: the global stream does not depend on them.
      expect((await t.api('GET', 'websocket/find/ws-beta')).body).toBeNull();
    });

    it("the global key may join any instance namespace (still filtered by that instance's settings)", async () => {
      await enableWebsocket(t, 'ws-beta', []);
      const c = open(t.url, '/ws-beta', { auth: { apikey: t.globalKey } });
      await connected(c);
      await inject(t, 'ws-beta', 'for beta watchers');
      await inject(t, 'ws-alpha', 'not for beta watchers');
      await waitForPayload(c, isUpsertOf('for beta watchers'));
      await inject(t, 'ws-beta', 'beta again');
      await waitForPayload(c, isUpsertOf('beta again'));
      expect(c.received.every((p) => p.instance === 'ws-beta')).toBe(true);
    });

    it('refuses: no key, a wrong key, a foreign or unknown namespace with an instance key, the global namespace with an instance key', async () => {
      const cases: [string, Parameters<typeof client>[2], number][] = [
        ['/ws-alpha', {}, 401],
        ['/ws-alpha', { auth: { apikey: 'not-a-key' } }, 401],
        ['/ws-alpha', { auth: { apikey: ['a', 'b'] } }, 401],
        ['/', {}, 401],
        ['/', { auth: { apikey: 'not-a-key' } }, 401],
        ['/ws-alpha', { auth: { apikey: beta.apikey } }, 403],
        ['/ws-nobody', { auth: { apikey: beta.apikey } }, 403],
        ['/', { auth: { apikey: alpha.apikey } }, 403],
        ['/ws-nobody', { auth: { apikey: t.globalKey } }, 404],
      ];
      const errors = await Promise.all(cases.map(([namespace, options]) => refused(open(t.url, namespace, options))));
      errors.forEach((err, i) => {
        expect(err.data?.status, `${cases[i][0]} ${JSON.stringify(cases[i][1])}: ${err.message}`).toBe(cases[i][2]);
      });
      // A foreign and an unknown name answer alike, so an instance key cannot probe names.
      expect(errors[5].message).toBe(errors[6].message);
      // Without a key, an existing and an unknown name answer alike too.
      const unknownNoKey = await refused(open(t.url, '/ws-nobody', {}));
      expect(unknownNoKey.message).toBe(errors[0].message);
      // Names that cannot be instance names are no namespace at all.
      for (const bad of ['/-dash', `/${'x'.repeat(65)}`]) {
        const invalid = await refused(open(t.url, bad, { auth: { apikey: t.globalKey } }));
        expect(invalid.message).toBe('Invalid namespace');
      }
    });

    it('a refused foreign client gets nothing while the owner keeps receiving', async () => {
      const intruder = open(t.url, '/ws-alpha', { auth: { apikey: beta.apikey } });
      const owner = open(t.url, '/ws-alpha', { auth: { apikey: alpha.apikey } });
      await refused(intruder);
      await connected(owner);
      await inject(t, 'ws-alpha', 'private');
      await waitForPayload(owner, isUpsertOf('private'));
      expect(intruder.received).toEqual([]);
      expect(intruder.socket.connected).toBe(false);
    });

    it('client-to-server events (sendNode) are ignored and change nothing', async () => {
      const c = open(t.url, '/ws-alpha', { auth: { apikey: alpha.apikey } });
      await connected(c);
      const before = (await t.api('GET', 'instance/fetchInstances')).body;
      c.socket.emit('sendNode', { instanceId: 'ws-beta', stanza: { tag: 'iq', attrs: { type: 'set' } } });
      c.socket.emit('sendNode', { instanceId: 'ws-alpha', stanza: '<presence type="unavailable"/>' });
      c.socket.emit('messages.upsert', { instance: 'ws-beta', data: { fake: true } });
      await inject(t, 'ws-alpha', 'still here');
      await waitForPayload(c, isUpsertOf('still here'));
      expect(c.socket.connected).toBe(true);
      expect(c.received.some((p) => JSON.stringify(p).includes('fake'))).toBe(false);
      for (const name of ['ws-alpha', 'ws-beta']) {
        expect((await t.api('GET', `instance/connectionState/${name}`)).body.instance.state).toBe('open');
      }
      const after = (await t.api('GET', 'instance/fetchInstances')).body;
      expect(after.length).toBe(before.length);
    });

    it('deleting an instance ends its namespace connections after its last events', async () => {
      const gamma = await linkedSandbox(t, 'ws-gamma', '5511900000003');
      await enableWebsocket(t, 'ws-gamma', [], gamma.apikey);
      const c = open(t.url, '/ws-gamma', { auth: { apikey: gamma.apikey } });
      await connected(c);
      const gone = new Promise<string>((resolve) => c.socket.once('disconnect', (reason) => resolve(reason)));
      expect((await t.api('DELETE', 'instance/delete/ws-gamma')).status).toBe(200);
      expect(await Promise.race([gone, new Promise((r) => setTimeout(() => r('timeout'), 5000))])).toBe('io server disconnect');
      expect(c.received.map((p) => p.event)).toContain('instance.delete');
      // A new instance with the same name is another tenant: the old key is refused there.
      await linkedSandbox(t, 'ws-gamma', '5511900000004');
      const stale = await refused(open(t.url, '/ws-gamma', { auth: { apikey: gamma.apikey } }));
      expect(stale.data?.status).toBe(401);
    });
  });

  describe.skipIf(!target.available)(`without global events, and disabled (${target.name})`, () => {
    let t: TestApp;
    let ws: WebsocketHandle;
    const clients: Client[] = [];

    // biome-ignore lint/suspicious/noDuplicateTestHooks: Biome takes describe.skipIf(…)(…) for no scope; this is the only beforeAll of its describe
    beforeAll(async () => {
      t = await startApp(target);
    });
    // biome-ignore lint/suspicious/noDuplicateTestHooks: as above, the only afterAll of its describe
    afterAll(async () => {
      for (const c of clients) c.socket.close();
      await ws?.close();
      await t?.close();
    });

    it('WEBSOCKET_ENABLED=false attaches nothing', async () => {
      const off = attachWebsocket(t.app, t.services, { enabled: false, globalEvents: true });
      const c = client(t.url, '/', { auth: { apikey: t.globalKey } });
      clients.push(c);
      const err = await refused(c);
      expect(err.data?.status).toBeUndefined();
      await off.close();
    });

    it('WEBSOCKET_GLOBAL_EVENTS=false: "/" is refused even to the global key; instance namespaces work', async () => {
      ws = attachWebsocket(t.app, t.services, { enabled: true, globalEvents: false });
      const delta = await linkedSandbox(t, 'ws-delta', '5511900000005');
      await enableWebsocket(t, 'ws-delta', ['MESSAGES_UPSERT'], delta.apikey);
      const global = client(t.url, '/', { auth: { apikey: t.globalKey } });
      const own = client(t.url, '/ws-delta', { auth: { apikey: delta.apikey } });
      clients.push(global, own);
      const err = await refused(global);
      expect(err.data?.status).toBe(404);
      expect(err.message).toContain('WEBSOCKET_GLOBAL_EVENTS');
      await connected(own);
      await inject(t, 'ws-delta', 'no global');
      await waitForPayload(own, isUpsertOf('no global'));
    });

    it('close() disconnects clients and refuses new ones', async () => {
      const delta = client(t.url, '/ws-delta', { auth: { apikey: t.globalKey } });
      clients.push(delta);
      await connected(delta);
      const gone = new Promise<void>((resolve) => delta.socket.once('disconnect', () => resolve()));
      await ws.close();
      await gone;
      const late = client(t.url, '/ws-delta', { auth: { apikey: t.globalKey } });
      clients.push(late);
      await refused(late);
    });
  });
});
