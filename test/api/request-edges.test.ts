// Edge cases of the HTTP API on both stores: odd bodies and paths, keys that could never be sent, refused creations
// that must leave nothing behind, concurrent changes that must all stay, and browsers calling from other origins.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startReceiver, storeTargets, type TestApp } from '../support/harness.js';

const targets = await storeTargets();

describe.each(targets)('API edges on $name', (target) => {
  describe.skipIf(!target.available)('requests', () => {
    let t: TestApp;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;

    beforeAll(async () => {
      t = await startApp(target, { SANDBOX_AUTO_LINK: 'true', CORS_ORIGIN: 'https://app.example, https://admin.example' });
      receiver = await startReceiver();
    });
    afterAll(async () => {
      await t?.close();
      await receiver?.close();
    });

    const names = async () =>
      ((await t.api('GET', 'instance/fetchInstances')).body as { instance: { instanceName: string } }[]).map((i) => i.instance.instanceName);

    it('validates a wrapped webhook object as strictly as a flat one, and a refused change keeps the stored webhook', async () => {
      await t.api('POST', 'instance/create', { body: { instanceName: 'hooks' } });
      const good = { enabled: true, url: `${receiver.url}/hooks`, events: ['MESSAGES_UPSERT'] };
      expect((await t.api('POST', 'webhook/set/hooks', { body: { webhook: good } })).status).toBe(201);
      const cases: [unknown, string][] = [
        [{ webhook: { ...good, enabled: 'false' } }, 'webhook.enabled must be a boolean'],
        [{ webhook: { ...good, url: 5 } }, 'webhook.url must be a string'],
        [{ webhook: { ...good, events: 'ALL' } }, 'webhook.events must be an array'],
        [{ webhook: { ...good, events: [1] } }, 'webhook.events[0] must be a string'],
        [{ webhook: { ...good, headers: 'abc' } }, 'webhook.headers must be an object'],
        [{ webhook: 'x' }, 'webhook must be an object'],
        [{ ...good, enabled: 'no' }, 'enabled must be a boolean'],
        // Flat settings are named as given: `url`, not `body.url`.
        [{}, 'url is required when the webhook is enabled'],
        [{ url: 'ftp://x' }, 'url must be an absolute http:// or https:// URL'],
      ];
      for (const [body, message] of cases) {
        const res = await t.api('POST', 'webhook/set/hooks', { body });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.response.message, JSON.stringify(body)).toContain(message);
      }
      const found = await t.api('GET', 'webhook/find/hooks');
      expect(found.body).toMatchObject({ enabled: true, url: `${receiver.url}/hooks`, events: ['MESSAGES_UPSERT'] });
    });

    it('refuses a sandbox number that cannot be linked before creating anything, so the name stays free', async () => {
      const bad = await t.api('POST', 'instance/create', { body: { instanceName: 'sbx-bad', integration: 'SANDBOX', number: 'abc' } });
      expect(bad.status).toBe(400);
      expect(bad.body.response.message[0]).toMatch(/number must be 5 to 15 digits/);
      const holder = await t.api('POST', 'instance/create', { body: { instanceName: 'sbx-holder', integration: 'SANDBOX', number: '5511933330001' } });
      expect(holder.status).toBe(201);
      const taken = await t.api('POST', 'instance/create', { body: { instanceName: 'sbx-taken', integration: 'SANDBOX', number: '551133330001' } });
      expect(taken.status).toBe(400);
      expect(taken.body.response.message[0]).toMatch(/already linked to another sandbox instance/);
      expect(await names()).not.toEqual(expect.arrayContaining(['sbx-bad']));
      expect(await names()).not.toEqual(expect.arrayContaining(['sbx-taken']));
      const rows = await t.services.store.db.selectFrom('instances').select('name').where('name', 'in', ['sbx-bad', 'sbx-taken']).execute();
      expect(rows).toEqual([]);
      // The name is free for a corrected request.
      const retry = await t.api('POST', 'instance/create', { body: { instanceName: 'sbx-bad', integration: 'SANDBOX', number: '5511933330002' } });
      expect(retry.status).toBe(201);
    });

    it('keeps every change of concurrent settings requests that change different fields', async () => {
      await t.api('POST', 'instance/create', { body: { instanceName: 'racy' } });
      for (let round = 0; round < 8; round++) {
        await t.api('POST', 'settings/set/racy', { body: { rejectCall: false, groupsIgnore: false, alwaysOnline: false } });
        const answers = await Promise.all([
          t.api('POST', 'settings/set/racy', { body: { rejectCall: true } }),
          t.api('POST', 'settings/set/racy', { body: { groupsIgnore: true } }),
          t.api('POST', 'settings/set/racy', { body: { alwaysOnline: true } }),
        ]);
        expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
        const found = await t.api('GET', 'settings/find/racy');
        expect(found.body, `round ${round}`).toMatchObject({ rejectCall: true, groupsIgnore: true, alwaysOnline: true });
        const row = await t.services.store.db
          .selectFrom('instances')
          .select(['reject_call', 'groups_ignore', 'always_online'])
          .where('name', '=', 'racy')
          .executeTakeFirstOrThrow();
        expect(row, `round ${round}`).toEqual({ reject_call: 1, groups_ignore: 1, always_online: 1 });
      }
    });

    it('a settings change made from a copy read before a link keeps the link (status and owner)', async () => {
      const created = await t.api('POST', 'instance/create', { body: { instanceName: 'stale', integration: 'SANDBOX' } });
      expect(created.status).toBe(201);
      // SANDBOX_AUTO_LINK links at creation; log out, then read the instance as a request would before linking again.
      expect((await t.api('DELETE', 'instance/logout/stale')).status).toBe(200);
      const before = t.services.registry.byInstanceName('stale')!;
      expect(before.status).toBe('close');
      const connect = await t.api('GET', 'instance/connect/stale');
      const scan = await t.api('POST', 'sandbox/scan', { body: { code: connect.body.code, number: '5511944440001' } });
      expect(scan.status).toBe(200);
      await t.services.instances.updateSettings(before, { readMessages: true });
      const listed = (await t.api('GET', 'instance/fetchInstances?instanceName=stale')).body[0].instance;
      expect(listed).toMatchObject({ status: 'open', owner: '5511944440001@s.whatsapp.net' });
      expect((await t.api('GET', 'settings/find/stale')).body).toMatchObject({ readMessages: true });
    });

    it('answers router failures (bad percent-encoding, overlong names) in the error envelope', async () => {
      const badUrl = await t.api('GET', 'instance/connectionState/%ZZ');
      expect(badUrl.status).toBe(400);
      expect(badUrl.body).toEqual({ status: 400, error: 'Bad Request', response: { message: [expect.stringMatching(/URL path is not valid/)] } });
      const long = await t.api('GET', `instance/connectionState/${'a'.repeat(101)}`);
      expect(long.status).toBe(400);
      expect(long.body).toEqual({
        status: 400,
        error: 'Bad Request',
        response: { message: ['a path parameter is too long: instance names are 1 to 64 characters'] },
      });
    });

    it('takes an empty body sent as application/json as no body', async () => {
      await t.api('POST', 'instance/create', { body: { instanceName: 'empty-body', integration: 'SANDBOX' } });
      const json = { 'content-type': 'application/json' };
      expect((await t.api('POST', 'instance/restart/empty-body', { body: '', headers: json })).status).toBe(200);
      expect((await t.api('DELETE', 'instance/logout/empty-body', { body: '', headers: json })).status).toBe(200);
      const send = await t.api('POST', 'message/sendText/empty-body', { body: '', headers: json });
      expect(send.status).toBe(400);
      expect(send.body.response.message.join(' ')).toMatch(/body/);
      expect((await t.api('DELETE', 'instance/delete/empty-body', { body: '', headers: json })).status).toBe(200);
      expect(await names()).not.toEqual(expect.arrayContaining(['empty-body']));
    });

    it('refuses instance keys that could never be sent in a header, or that are the global key', async () => {
      const cases: [string, RegExp][] = [
        [t.globalKey, /must not be the global API key/],
        ['ключ-ключ-ключ-ключ', /visible ASCII/],
        [' padded-token-1234567 ', /visible ASCII/],
        ['line\nbreak-token-123456', /visible ASCII/],
      ];
      for (const [token, message] of cases) {
        const res = await t.api('POST', 'instance/create', { body: { instanceName: 'keyed', token } });
        expect(res.status, token).toBe(400);
        expect(res.body.response.message[0], token).toMatch(message);
      }
      expect(await names()).not.toEqual(expect.arrayContaining(['keyed']));
      const ok = await t.api('POST', 'instance/create', { body: { instanceName: 'keyed', token: 'Visible-ASCII_token.1234' } });
      expect(ok.status).toBe(201);
      expect((await t.api('GET', 'instance/connectionState/keyed', { key: 'Visible-ASCII_token.1234' })).status).toBe(200);
    });

    it('stores broker settings given at creation, and refuses event names and instance names a broker cannot take', async () => {
      const created = await t.api('POST', 'instance/create', {
        body: { instanceName: 'brokered', rabbitmq: { events: ['MESSAGES_UPSERT'] }, nats: { enabled: true, events: [] } },
      });
      expect(created.status).toBe(201);
      expect((await t.api('GET', 'rabbitmq/find/brokered')).body).toEqual({ enabled: true, events: ['MESSAGES_UPSERT'] });
      expect((await t.api('GET', 'nats/find/brokered')).body).toEqual({ enabled: true, events: [] });
      // Inherited object keys are no event names.
      for (const name of ['toString', 'constructor', '__proto__']) {
        const res = await t.api('POST', 'rabbitmq/set/brokered', { body: { rabbitmq: { enabled: true, events: [name] } } });
        expect(res.status, name).toBe(400);
        expect(res.body.response.message[0], name).toMatch(/rabbitmq.events\[0\] .* is not an event name/);
      }
      expect((await t.api('GET', 'rabbitmq/find/brokered')).body).toEqual({ enabled: true, events: ['MESSAGES_UPSERT'] });
      // RabbitMQ reserves amq.* exchanges; NATS subjects have no empty tokens.
      const amq = await t.api('POST', 'instance/create', { body: { instanceName: 'amq.orders', rabbitmq: { enabled: true } } });
      expect(amq.status).toBe(400);
      expect(amq.body.response.message[0]).toMatch(/RabbitMQ reserves exchange names starting with "amq."/);
      expect(await names()).not.toEqual(expect.arrayContaining(['amq.orders']));
      // The global exchange's own name would mix the instance's events with everyone's.
      const global = await t.api('POST', 'instance/create', { body: { instanceName: 'evolution_exchange', rabbitmq: {} } });
      expect(global.status).toBe(400);
      expect(global.body.response.message[0]).toMatch(/name of the global RabbitMQ exchange \(RABBITMQ_EXCHANGE_NAME\)/);
      await t.api('POST', 'instance/create', { body: { instanceName: 'amq.plain' } });
      expect((await t.api('POST', 'rabbitmq/set/amq.plain', { body: { rabbitmq: { enabled: true, events: [] } } })).status).toBe(400);
      expect((await t.api('POST', 'rabbitmq/set/amq.plain', { body: { rabbitmq: { enabled: false } } })).status).toBe(201);
      expect((await t.api('POST', 'nats/set/amq.plain', { body: { nats: { enabled: true } } })).status).toBe(201);
      await t.api('POST', 'instance/create', { body: { instanceName: 'dotted.' } });
      const dotted = await t.api('POST', 'nats/set/dotted.', { body: { nats: { enabled: true } } });
      expect(dotted.status).toBe(400);
      expect(dotted.body.response.message[0]).toMatch(/NATS subjects cannot have an empty token/);
      expect((await t.api('GET', 'nats/find/dotted.')).body).toBeNull();
    });

    it("stores with each event the brokers the instance's settings wanted it on", async () => {
      await t.api('POST', 'instance/create', { body: { instanceName: 'wants', integration: 'SANDBOX', number: '5511955550009' } });
      await t.api('POST', 'rabbitmq/set/wants', { body: { rabbitmq: { enabled: true, events: ['MESSAGES_UPSERT'] } } });
      await t.api('POST', 'nats/set/wants', { body: { nats: { enabled: true, events: [] } } });
      expect((await t.api('POST', 'sandbox/inject/wants', { body: { from: '5511977770001', text: 'hi' } })).status).toBe(201);
      const id = (await t.api('GET', 'instance/fetchInstances?instanceName=wants')).body[0].instance.instanceId as string;
      const wants = async (event: string) =>
        (await t.services.store.db.selectFrom('outbox').select('broker_wants').where('instance_id', '=', id).where('event', '=', event).execute()).map((r) =>
          Number(r.broker_wants),
        );
      // Written while RabbitMQ wanted upserts and NATS wanted everything.
      expect(await wants('MESSAGES_UPSERT')).toEqual([3]);
      // The deletion's last event, written after NATS was switched off and RabbitMQ set to it: RabbitMQ only.
      await t.api('POST', 'nats/set/wants', { body: { nats: { enabled: false } } });
      await t.api('POST', 'rabbitmq/set/wants', { body: { rabbitmq: { enabled: true, events: ['REMOVE_INSTANCE'] } } });
      await t.api('DELETE', 'instance/delete/wants');
      expect(await wants('REMOVE_INSTANCE')).toEqual([1]);
    });

    it('answers browsers from the configured origins (CORS), others and non-browsers without CORS headers', async () => {
      await t.api('POST', 'instance/create', { body: { instanceName: 'corsy', integration: 'SANDBOX' } });
      const preflight = await t.api('OPTIONS', 'message/sendText/corsy', {
        key: null,
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'apikey, content-type' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/apikey/);
      const fromBrowser = await t.api('GET', 'instance/connectionState/corsy', { headers: { origin: 'https://admin.example' } });
      expect(fromBrowser.status).toBe(200);
      expect(fromBrowser.headers.get('access-control-allow-origin')).toBe('https://admin.example');
      const elsewhere = await t.api('GET', 'instance/connectionState/corsy', { headers: { origin: 'https://evil.example' } });
      expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
      const noOrigin = await t.api('GET', 'instance/connectionState/corsy');
      expect(noOrigin.status).toBe(200);
      expect(noOrigin.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('reads bodies as UTF-8 JSON: other charsets 415, broken bytes, deep nesting and prototype keys 400, nothing stored', async () => {
      const created = await t.api('POST', 'instance/create', { body: { instanceName: 'bodies', integration: 'SANDBOX', number: '5511977710001' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const key = created.body.hash.apikey as string;
      const send = (body: string | Uint8Array, contentType: string, extra: Record<string, string> = {}) =>
        fetch(`${t.url}/messenger/message/sendText/bodies`, {
          method: 'POST',
          headers: { apikey: key, 'content-type': contentType, ...extra },
          body: typeof body === 'string' ? body : new Uint8Array(body),
        });
      const stored = async () =>
        (await t.services.store.db.selectFrom('messages').select('id').where('instance_id', '=', created.body.instance.instanceId).execute()).length;

      const latin1 = await send(Buffer.from('{"number":"5511944440002","text":"caf\xe9"}', 'latin1'), 'application/json; charset=iso-8859-1');
      expect(latin1.status).toBe(415);
      expect(((await latin1.json()) as { response: { message: string[] } }).response.message[0]).toMatch(
        /charset iso-8859-1 is not supported; send the body as UTF-8/,
      );
      const broken = await send(Buffer.from([...Buffer.from('{"number":"5511944440002","text":"'), 0xff, 0xfe, ...Buffer.from('"}')]), 'application/json');
      expect(broken.status).toBe(400);
      expect(((await broken.json()) as { response: { message: string[] } }).response.message[0]).toMatch(/not valid UTF-8/);
      const deep = `{"number":"5511944440002","text":"d","extra":${'['.repeat(5000)}${']'.repeat(5000)}}`;
      const nested = await send(deep, 'application/json', { 'Idempotency-Key': 'deep-1' });
      expect(nested.status).toBe(400);
      expect(((await nested.json()) as { response: { message: string[] } }).response.message[0]).toMatch(/nests objects and arrays more than 32 levels deep/);
      const proto = await send('{"number":"5511944440002","text":"x","__proto__":{"a":1}}', 'application/json');
      expect(proto.status).toBe(400);
      expect(((await proto.json()) as { response: { message: string[] } }).response.message[0]).toMatch(/must not have a "__proto__" key/);
      expect(await stored()).toBe(0);
      // UTF-8 declared in any spelling, and text with characters outside Latin-1, go through.
      const fine = await send('{"number":"5511944440002","text":"café ✓"}', 'application/json; charset=UTF-8');
      expect(fine.status, await fine.clone().text()).toBe(201);
      expect(((await fine.json()) as { message: { conversation: string } }).message.conversation).toBe('café ✓');
    });

    it('answers a quote of an id holding a NUL like any unknown quote, on every store', async () => {
      const created = await t.api('POST', 'instance/create', { body: { instanceName: 'nul-quote', integration: 'SANDBOX', number: '5511977710003' } });
      const res = await t.api('POST', 'message/sendText/nul-quote', {
        key: created.body.hash.apikey,
        body: { number: '5511944440004', text: 'q', quoted: { key: { id: 'abc\u0000def' } } },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    });

    it('creates the way Evolution clients expect: websocket present means enabled, a WhatsApp Web number checked, "" as none', async () => {
      const ws = await t.api('POST', 'instance/create', { body: { instanceName: 'ws-implied', websocket: { events: ['MESSAGES_UPSERT'] } } });
      expect(ws.status, JSON.stringify(ws.body)).toBe(201);
      expect((await t.api('GET', 'websocket/find/ws-implied')).body).toEqual({ enabled: true, events: ['MESSAGES_UPSERT'] });
      const bad = await t.api('POST', 'instance/create', { body: { instanceName: 'web-bad-number', number: 'abc' } });
      expect(bad.status).toBe(400);
      expect(bad.body.response.message[0]).toMatch(/number must be a phone number with country code, 5 to 15 digits/);
      expect(await names()).not.toContain('web-bad-number');
      expect((await t.api('POST', 'instance/create', { body: { instanceName: 'web-no-number', number: '' } })).status).toBe(201);
      const spelled = await t.api('POST', 'instance/create', { body: { instanceName: 'web-spelled', number: '+55 (11) 98888-7777' } });
      expect(spelled.status).toBe(201);
      const row = await t.services.store.db.selectFrom('instances').select('number').where('name', '=', 'web-spelled').executeTakeFirstOrThrow();
      expect(row.number).toBe('5511988887777');
    });

    it('keeps the routing number of an EVOLUTION instance when connect is given a number (pairing codes are WhatsApp Web only)', async () => {
      expect((await t.api('POST', 'instance/create', { body: { instanceName: 'evo-route', integration: 'EVOLUTION', number: 'evo-route-1' } })).status).toBe(
        201,
      );
      const connect = await t.api('GET', 'instance/connect/evo-route?number=5511999990001');
      expect(connect.status).toBe(200);
      expect(connect.body).toEqual({ instance: { instanceName: 'evo-route', state: 'open' } });
      const row = await t.services.store.db.selectFrom('instances').select('number').where('name', '=', 'evo-route').executeTakeFirstOrThrow();
      expect(row.number).toBe('evo-route-1');
    });

    it('answers concurrent creates with one token: one instance, the others told about the token, never about the name', async () => {
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => t.api('POST', 'instance/create', { body: { instanceName: `same-token-${i}`, token: 'shared-token-0123456789' } })),
      );
      expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
      for (const lost of answers.filter((a) => a.status !== 201)) {
        expect(lost.status).toBe(400);
        expect(lost.body.response.message[0]).toMatch(/token is already the key of another instance/);
      }
      expect((await names()).filter((n) => n.startsWith('same-token-'))).toHaveLength(1);
    });

    it('says a repeated query parameter must be given once, and shows a UTF-8 Idempotency-Key as written', async () => {
      const twice = await t.api('GET', 'instance/fetchInstances?instanceName=a&instanceName=b');
      expect(twice.status).toBe(400);
      expect(twice.body.response.message).toEqual(['instanceName must be given once']);
      const created = await t.api('POST', 'instance/create', { body: { instanceName: 'utf8-key', integration: 'SANDBOX', number: '5511977710005' } });
      const key = created.body.hash.apikey as string;
      // fetch sends header bytes as given: UTF-8 for this key, which Node reads as Latin-1.
      const idem = Buffer.from('ключ🔑', 'utf8').toString('latin1');
      const first = await t.api('POST', 'message/sendText/utf8-key', {
        key,
        headers: { 'Idempotency-Key': idem },
        body: { number: '5511977710006', text: 'one' },
      });
      expect(first.status).toBe(201);
      const other = await t.api('POST', 'message/sendText/utf8-key', {
        key,
        headers: { 'Idempotency-Key': idem },
        body: { number: '5511977710006', text: 'two' },
      });
      expect(other.status).toBe(422);
      expect(other.body.response.message[0]).toContain('Idempotency-Key "ключ🔑" was already used');
    });

    it('says which filter does not match when fetchInstances is given a name and an id of different instances', async () => {
      const one = await t.api('POST', 'instance/create', { body: { instanceName: 'filter-one' } });
      await t.api('POST', 'instance/create', { body: { instanceName: 'filter-two' } });
      const res = await t.api('GET', `instance/fetchInstances?instanceName=filter-two&instanceId=${one.body.instance.instanceId}`);
      expect(res.status).toBe(404);
      expect(res.body.response.message[0]).toBe(`Instance "filter-two" does not have the id "${one.body.instance.instanceId}"`);
    });

    it('answers requests refused before routing (headers too large) in the error envelope', async () => {
      const res = await fetch(`${t.url}/messenger/instance/fetchInstances`, { headers: { apikey: t.globalKey, 'Idempotency-Key': 'k'.repeat(20_000) } });
      expect(res.status).toBe(431);
      expect(await res.json()).toEqual({
        status: 431,
        error: 'Request Header Fields Too Large',
        response: { message: [expect.stringMatching(/request headers are too large/)] },
      });
    });
  });
});
