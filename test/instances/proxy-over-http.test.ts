// proxy/set, proxy/find and the proxy fields of instance/create over HTTP, on SQLite and PostgreSQL: Evolution's shapes
// and codes, clear 400s naming the field, the password sealed at rest and never answered nor logged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, storeTargets, type TestApp } from '../support/harness.js';
import { capturedLogger } from '../support/captured-logger.js';
import { closedPort, startHttpProxy, startSocksProxy, type TestProxy } from '../support/proxies.js';
import { uniqueName } from '../support/unique.js';

const targets = await storeTargets();

const PASSWORD = 'pr0xy-s3cret-Zq9';
const auth = { username: 'gateway', password: PASSWORD };

describe.each(targets)('proxy routes on $name', (target) => {
  describe.skipIf(!target.available)(`proxy/set and proxy/find (${target.name})`, () => {
    let t: TestApp;
    let httpProxy: TestProxy;
    let socksProxy: TestProxy;
    const logs = capturedLogger('debug');
    /** Every answer body of this suite, to show the password is in none. */
    const answers: string[] = [];
    const api = async (...args: Parameters<TestApp['api']>) => {
      const answer = await t.api(...args);
      answers.push(JSON.stringify(answer.body));
      return answer;
    };
    const create = async (extra: Record<string, unknown> = {}) => {
      const name = uniqueName('px');
      const answer = await api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX', ...extra } });
      return { name, answer };
    };

    beforeAll(async () => {
      httpProxy = await startHttpProxy({ auth });
      socksProxy = await startSocksProxy({ auth });
      t = await startApp(target, {}, logs.logger);
    });
    afterAll(async () => {
      await t?.close();
      await httpProxy?.close();
      await socksProxy?.close();
    });

    it('answers null before any proxy, then the proxy set with its password masked (201 and 200)', async () => {
      const { name } = await create();
      const none = await api('GET', `proxy/find/${name}`);
      expect(none.status).toBe(200);
      expect(none.body).toBeNull();

      const set = await api('POST', `proxy/set/${name}`, {
        body: { enabled: true, host: '127.0.0.1', port: String(httpProxy.port), protocol: 'http', username: 'gateway', password: PASSWORD },
      });
      expect(set.status).toBe(201);
      expect(set.body).toEqual({
        proxy: {
          instanceName: name,
          proxy: { enabled: true, host: '127.0.0.1', port: String(httpProxy.port), protocol: 'http', username: 'gateway', password: '********' },
        },
      });

      const found = await api('GET', `proxy/find/${name}`);
      expect(found.status).toBe(200);
      expect(found.body).toMatchObject({
        enabled: true,
        host: '127.0.0.1',
        port: String(httpProxy.port),
        protocol: 'http',
        username: 'gateway',
        password: '********',
      });
      expect(typeof found.body.instanceId).toBe('string');
      expect(Date.parse(found.body.createdAt)).toBeGreaterThan(0);
    });

    it('stores the password sealed; the mask sent back keeps it; a new one replaces it', async () => {
      const { name, answer } = await create();
      const id = answer.body.instance.instanceId as string;
      const body = { enabled: true, host: '127.0.0.1', port: socksProxy.port, protocol: 'socks5', username: 'gateway', password: PASSWORD };
      expect((await api('POST', `proxy/set/${name}`, { body })).status).toBe(201);
      const row = await t.services.store.db.selectFrom('instance_proxies').selectAll().where('instance_id', '=', id).executeTakeFirstOrThrow();
      expect(row.password_sealed).toBeTruthy();
      expect(row.password_sealed).not.toContain(PASSWORD);
      expect(row.password_sealed?.startsWith('v1.')).toBe(true);

      // What find answered, sent back as it is (a client editing the host only): the stored password stays.
      const again = await api('POST', `proxy/set/${name}`, { body: { ...body, password: '********' } });
      expect(again.status).toBe(201);
      const kept = await t.services.store.db.selectFrom('instance_proxies').selectAll().where('instance_id', '=', id).executeTakeFirstOrThrow();
      expect(kept.password_sealed).toBe(row.password_sealed);
      expect((await t.services.connectorHost.proxy(id))?.password).toBe(PASSWORD);

      await api('POST', `proxy/set/${name}`, { body: { ...body, password: 'another-one' } });
      expect((await t.services.connectorHost.proxy(id))?.password).toBe('another-one');
    });

    it('turns the proxy off with enabled:false, forgetting host and credentials', async () => {
      const { name, answer } = await create();
      const id = answer.body.instance.instanceId as string;
      await api('POST', `proxy/set/${name}`, {
        body: { enabled: true, host: '127.0.0.1', port: String(httpProxy.port), protocol: 'http', username: 'gateway', password: PASSWORD },
      });
      const off = await api('POST', `proxy/set/${name}`, { body: { enabled: false } });
      expect(off.status).toBe(201);
      expect(off.body.proxy.proxy).toEqual({ enabled: false, host: '', port: '', protocol: '', username: '', password: '' });
      expect((await api('GET', `proxy/find/${name}`)).body).toMatchObject({ enabled: false, host: '', password: '' });
      const row = await t.services.store.db.selectFrom('instance_proxies').selectAll().where('instance_id', '=', id).executeTakeFirstOrThrow();
      expect(row.password_sealed).toBeNull();
      expect(await t.services.connectorHost.proxy(id)).toBeNull();
    });

    it('refuses bad fields with a 400 naming the field, and changes nothing', async () => {
      const { name } = await create();
      const good = { enabled: true, host: '127.0.0.1', port: String(httpProxy.port), protocol: 'http' };
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ ...good, protocol: 'ftp' }, /protocol must be one of http, https, socks4, socks5/],
        [{ ...good, protocol: undefined }, /protocol is required/],
        [{ ...good, port: '0' }, /port must be a port number between 1 and 65535/],
        [{ ...good, port: '70000' }, /port must be a port number between 1 and 65535/],
        [{ ...good, port: 'eighty' }, /port must be a port number/],
        [{ ...good, port: undefined }, /port is required/],
        [{ ...good, host: undefined }, /host is required/],
        [{ ...good, host: 'http://127.0.0.1' }, /host must be a host name or IP address without a scheme/],
        [{ ...good, host: 'bad host' }, /host must be a host name or IP address/],
        [{ ...good, password: 'x' }, /username is required when password is given/],
        [{ ...good, enabled: 'yes' }, /enabled/],
        [{ ...good, password: '********', username: 'u' }, /none is stored/],
      ];
      for (const [body, message] of cases) {
        const answer = await api('POST', `proxy/set/${name}`, { body });
        expect(answer.status, JSON.stringify(body)).toBe(400);
        expect(answer.body.error).toBe('Bad Request');
        expect(answer.body.response.message.join(' '), JSON.stringify(body)).toMatch(message);
      }
      expect((await api('GET', `proxy/find/${name}`)).body).toBeNull();
    });

    it('refuses a proxy that cannot be reached (400 saying so), keeping the one before', async () => {
      const { name } = await create();
      await api('POST', `proxy/set/${name}`, { body: { enabled: true, host: '127.0.0.1', port: String(httpProxy.port), protocol: 'http' } });
      const port = await closedPort();
      const answer = await api('POST', `proxy/set/${name}`, { body: { enabled: true, host: '127.0.0.1', port: String(port), protocol: 'socks5' } });
      expect(answer.status).toBe(400);
      expect(answer.body.response.message[0]).toContain(`the proxy socks5://127.0.0.1:${port} refused the connection`);
      expect(answer.body.response.message[0]).toContain('the proxy was not changed');
      expect((await api('GET', `proxy/find/${name}`)).body).toMatchObject({ protocol: 'http', port: String(httpProxy.port) });
    });

    it('answers 404 for an unknown instance and 401 without a key', async () => {
      expect((await api('GET', 'proxy/find/no-such-instance')).status).toBe(404);
      expect((await api('POST', 'proxy/set/no-such-instance', { body: { enabled: false } })).status).toBe(404);
      const { name } = await create();
      expect((await api('GET', `proxy/find/${name}`, { key: null })).status).toBe(401);
    });

    it('takes the proxy fields of instance/create (stored, masked) instead of dropping them', async () => {
      const { name, answer } = await create({
        proxyHost: '127.0.0.1',
        proxyPort: String(socksProxy.port),
        proxyProtocol: 'socks5',
        proxyUsername: 'gateway',
        proxyPassword: PASSWORD,
      });
      expect(answer.status).toBe(201);
      const found = await api('GET', `proxy/find/${name}`);
      expect(found.body).toMatchObject({ enabled: true, protocol: 'socks5', port: String(socksProxy.port), username: 'gateway', password: '********' });
      expect((await t.services.connectorHost.proxy(answer.body.instance.instanceId))?.password).toBe(PASSWORD);

      // Empty proxy fields (as form-built clients send them) mean none.
      const plain = await create({ proxyHost: '', proxyPort: '', proxyProtocol: '' });
      expect(plain.answer.status).toBe(201);
      expect((await api('GET', `proxy/find/${plain.name}`)).body).toBeNull();
    });

    it('refuses a create with a bad or unreachable proxy (400 naming the field) and creates nothing', async () => {
      const bad = await create({ proxyHost: '127.0.0.1', proxyPort: String(httpProxy.port), proxyProtocol: 'gopher' });
      expect(bad.answer.status).toBe(400);
      expect(bad.answer.body.response.message.join(' ')).toMatch(/proxyProtocol must be one of/);
      expect((await api('GET', `instance/fetchInstances?instanceName=${bad.name}`)).status).toBe(404);

      const missing = await create({ proxyHost: '127.0.0.1', proxyProtocol: 'http' });
      expect(missing.answer.status).toBe(400);
      expect(missing.answer.body.response.message.join(' ')).toMatch(/proxyPort is required/);

      const port = await closedPort();
      const down = await create({ proxyHost: '127.0.0.1', proxyPort: String(port), proxyProtocol: 'http' });
      expect(down.answer.status).toBe(400);
      expect(down.answer.body.response.message[0]).toMatch(/refused the connection.*no instance was created/);
      expect((await api('GET', `instance/fetchInstances?instanceName=${down.name}`)).status).toBe(404);
    });

    it('deletes the proxy with its instance', async () => {
      const { name, answer } = await create({ proxyHost: '127.0.0.1', proxyPort: String(httpProxy.port), proxyProtocol: 'http' });
      const id = answer.body.instance.instanceId as string;
      expect((await api('DELETE', `instance/delete/${name}`)).status).toBe(200);
      const rows = await t.services.store.db.selectFrom('instance_proxies').selectAll().where('instance_id', '=', id).execute();
      expect(rows).toEqual([]);
    });

    it('never shows the password in an answer or a log line', () => {
      expect(answers.length).toBeGreaterThan(20);
      for (const body of answers) expect(body).not.toContain(PASSWORD);
      expect(logs.raw.some((line) => line.includes('proxy set'))).toBe(true);
      for (const line of logs.raw) expect(line).not.toContain(PASSWORD);
    });
  });
});
