// A WHATSAPP-BUSINESS instance behind a proxy: its Graph calls and the media URLs of its sends go through real HTTP
// CONNECT, HTTPS (CONNECT over TLS) and SOCKS5 proxies on loopback (with credentials) and a SOCKS4 one; wrong
// credentials and an unreachable proxy say so.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../../support/harness.js';
import { capturedLogger } from '../../support/captured-logger.js';
import { danteAvailable, startHttpProxy, startHttpsProxy, startSocks4Proxy, startSocksProxy, testTls, type TestProxy } from '../../support/proxies.js';
import { uniqueName } from '../../support/unique.js';
import { sleep, waitFor } from '../../support/wait.js';

const targets = await storeTargets();
const PASSWORD = 'graph-proxy-pw-7Qx';
const auth = { username: 'meta', password: PASSWORD };
const PHONE_ID = '109876543210';

/** Answers Graph's send and upload calls (any version) and records them. */
async function startGraph() {
  const calls: string[] = [];
  let seq = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      calls.push(`${req.method} ${path}`);
      const body = path.endsWith('/media')
        ? { id: `media-${++seq}` }
        : { messaging_product: 'whatsapp', contacts: [{ input: 'x', wa_id: '5511912345678' }], messages: [{ id: `wamid.T${++seq}` }] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Serves one PNG at /photo.png. */
async function startMediaHost() {
  const png = await sharp({ create: { width: 32, height: 24, channels: 3, background: '#3366cc' } })
    .png()
    .toBuffer();
  const server: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(png));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/photo.png`,
    host: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe.each(targets)('WHATSAPP-BUSINESS through a proxy on $name', (target) => {
  describe.skipIf(!target.available)(`Graph calls and media downloads (${target.name})`, () => {
    let t: TestApp;
    let graph: Awaited<ReturnType<typeof startGraph>>;
    let media: Awaited<ReturnType<typeof startMediaHost>>;
    let receiver: Receiver;
    const proxies: TestProxy[] = [];
    const logs = capturedLogger('debug');

    beforeAll(async () => {
      graph = await startGraph();
      media = await startMediaHost();
      receiver = await startReceiver();
      t = await startApp(target, { WA_BUSINESS_URL: graph.url }, logs.logger);
    });
    afterAll(async () => {
      await t?.close();
      for (const proxy of proxies) await proxy.close();
      await graph?.close();
      await media?.close();
      await receiver?.close();
    });

    const business = async (proxy: Record<string, unknown>) => {
      const name = uniqueName('wab');
      const created = await t.api('POST', 'instance/create', {
        body: {
          instanceName: name,
          integration: 'WHATSAPP-BUSINESS',
          token: 'meta-access-token',
          number: PHONE_ID,
          webhook: { url: receiver.url, byEvents: false, base64: false, events: ['CONNECTION_UPDATE'] },
          ...proxy,
        },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return name;
    };

    const tls = testTls();
    for (const kind of ['http', 'https', 'socks5'] as const) {
      it.skipIf(kind === 'https' && !tls)(`sends text and a media URL through a ${kind} proxy that asks for credentials`, async () => {
        const proxy =
          kind === 'http' ? await startHttpProxy({ auth }) : kind === 'https' && tls ? await startHttpsProxy(tls, { auth }) : await startSocksProxy({ auth });
        proxies.push(proxy);
        const name = await business({
          proxyHost: '127.0.0.1',
          proxyPort: String(proxy.port),
          proxyProtocol: kind,
          proxyUsername: 'meta',
          proxyPassword: PASSWORD,
        });
        const before = graph.calls.length;
        const warnings: string[] = [];
        const onWarning = (warning: Error & { code?: string }) => warnings.push(`${warning.code ?? warning.name}: ${warning.message}`);
        process.on('warning', onWarning);

        const text = await t.api('POST', `message/sendText/${name}`, { body: { number: '5511912345678', text: 'through the proxy' } });
        expect(text.status, JSON.stringify(text.body)).toBe(201);
        const photo = await t.api('POST', `message/sendMedia/${name}`, {
          body: { number: '5511912345678', mediatype: 'image', media: media.url, caption: 'a photo' },
        });
        expect(photo.status, JSON.stringify(photo.body)).toBe(201);

        // The media URL and every Graph call went through the proxy, which accepted the credentials.
        await waitFor(() => graph.calls.length >= before + 3, 10_000, { what: () => `graph calls ${graph.calls.slice(before).join(', ')}` });
        expect(graph.calls.slice(before)).toEqual(
          [`POST /v23.0/${PHONE_ID}/messages`, `POST /v23.0/${PHONE_ID}/media`, `POST /v23.0/${PHONE_ID}/messages`].map((c) =>
            c.replace('v23.0', graph.calls[before].split('/')[1]),
          ),
        );
        expect(proxy.seen).toContain(media.host);
        expect(proxy.seen).toContain(graph.host);
        expect(proxy.refused).toBe(0);
        // An https proxy given by IP address is reached with no TLS server name (Node warns when one is an address).
        process.off('warning', onWarning);
        expect(warnings).toEqual([]);
      });
    }

    it.skipIf(!tls)('says what to do when an HTTPS proxy presents a certificate the node does not trust; the send waits', async () => {
      const proxy = await startHttpsProxy((tls as NonNullable<typeof tls>).untrusted);
      proxies.push(proxy);
      const name = await business({ proxyHost: '127.0.0.1', proxyPort: String(proxy.port), proxyProtocol: 'https' });

      const sent = await t.api('POST', `message/sendText/${name}`, { body: { number: '5511912345678', text: 'waits for a trusted proxy' } });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      expect(sent.body.status).toBe('PENDING');
      const state = await waitFor(async () => {
        const answer = await t.api('GET', `instance/connectionState/${name}`);
        return answer.body.instance.reason ? answer.body.instance : null;
      }, 10_000);
      expect(state.state).toBe('connecting');
      expect(state.reason).toBe(
        `the proxy https://127.0.0.1:${proxy.port} presented a certificate this node does not trust (DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate); ` +
          'use a proxy certificate from a public authority, or give the node the authority that signed it (NODE_EXTRA_CA_CERTS, read at start)',
      );
      // Not a proxy that is down: probing it (it answers TCP) does not open the instance again.
      await sleep(2_500);
      expect((await t.api('GET', `instance/connectionState/${name}`)).body.instance.state).toBe('connecting');
    });

    it.skipIf(!danteAvailable())('sends text and a media URL through a SOCKS4 proxy (Dante, which refuses SOCKS5)', async () => {
      const proxy = await startSocks4Proxy();
      proxies.push(proxy);
      const name = await business({ proxyHost: '127.0.0.1', proxyPort: String(proxy.port), proxyProtocol: 'socks4' });
      const before = graph.calls.length;

      const text = await t.api('POST', `message/sendText/${name}`, { body: { number: '5511912345678', text: 'through socks4' } });
      expect(text.status, JSON.stringify(text.body)).toBe(201);
      const photo = await t.api('POST', `message/sendMedia/${name}`, { body: { number: '5511912345678', mediatype: 'image', media: media.url } });
      expect(photo.status, JSON.stringify(photo.body)).toBe(201);

      await waitFor(() => graph.calls.length >= before + 3, 10_000, { what: () => `graph calls ${graph.calls.slice(before).join(', ')}` });
      await waitFor(() => proxy.seen.includes(graph.host) && proxy.seen.includes(media.host), 5_000, { what: () => `Dante's log: ${proxy.seen}` });
    });

    it('fails clearly when the proxy refuses the credentials: the media send is a 400, the instance says why', async () => {
      const proxy = await startHttpProxy({ auth });
      proxies.push(proxy);
      const name = await business({
        proxyHost: '127.0.0.1',
        proxyPort: String(proxy.port),
        proxyProtocol: 'http',
        proxyUsername: 'meta',
        proxyPassword: 'wrong',
      });

      const photo = await t.api('POST', `message/sendMedia/${name}`, { body: { number: '5511912345678', mediatype: 'image', media: media.url } });
      expect(photo.status).toBe(400);
      expect(photo.body.response.message[0]).toBe(
        `media URL could not be fetched through the instance's proxy: the proxy http://127.0.0.1:${proxy.port} refused the credentials (HTTP 407 Proxy Authentication Required)`,
      );

      // A Graph call refused by the proxy: the send stays queued (201 PENDING) and the state says why.
      const text = await t.api('POST', `message/sendText/${name}`, { body: { number: '5511912345678', text: 'hello' } });
      expect(text.status).toBe(201);
      const state = await waitFor(async () => {
        const answer = await t.api('GET', `instance/connectionState/${name}`);
        return answer.body.instance.state === 'connecting' ? answer.body.instance : null;
      }, 10_000);
      expect(state.reason).toBe(`the proxy http://127.0.0.1:${proxy.port} refused the credentials (HTTP 407 Proxy Authentication Required)`);
      expect(proxy.refused).toBeGreaterThan(0);
      // A refusal lasts until the proxy is changed: a probe that reaches the proxy does not open the instance again.
      await sleep(2_500);
      expect((await t.api('GET', `instance/connectionState/${name}`)).body.instance.state).toBe('connecting');

      // The right credentials: the instance opens again and the queued send leaves.
      const before = graph.calls.length;
      const fixed = await t.api('POST', `proxy/set/${name}`, {
        body: { enabled: true, host: '127.0.0.1', port: String(proxy.port), protocol: 'http', username: 'meta', password: PASSWORD },
      });
      expect(fixed.status).toBe(201);
      await waitFor(async () => (await t.api('GET', `instance/connectionState/${name}`)).body.instance.state === 'open', 10_000);
      await waitFor(() => graph.calls.length > before, 15_000, { what: 'the queued send to leave' });
    });

    it('shows an unreachable proxy in the state (connectionState, fetchInstances, connection.update) and recovers', async () => {
      const proxy = await startHttpProxy();
      const port = proxy.port;
      const name = await business({ proxyHost: '127.0.0.1', proxyPort: String(port), proxyProtocol: 'http' });
      await proxy.close();

      const sent = await t.api('POST', `message/sendText/${name}`, { body: { number: '5511912345678', text: 'waits for the proxy' } });
      expect(sent.status).toBe(201);
      expect(sent.body.status).toBe('PENDING');
      const reason = `the proxy http://127.0.0.1:${port} refused the connection (ECONNREFUSED)`;
      await waitFor(async () => (await t.api('GET', `instance/connectionState/${name}`)).body.instance.reason === reason, 10_000, {
        what: 'connectionState to carry the reason',
      });
      expect((await t.api('GET', `instance/connectionState/${name}`)).body.instance.state).toBe('connecting');
      const listed = await t.api('GET', `instance/fetchInstances?instanceName=${name}`);
      expect(listed.body[0].instance.reason).toBe(reason);
      await receiver.waitFor(() => receiver.of('connection.update', name).some((e) => e.body.data.reason === reason), 10_000);
      const update = receiver.of('connection.update', name).find((e) => e.body.data.reason === reason);
      expect(update?.body.data).toMatchObject({ state: 'connecting', statusReason: 503 });

      // The proxy is back at its address: the instance opens again by itself and the waiting send leaves.
      const before = graph.calls.length;
      const back = await startHttpProxy({ port });
      proxies.push(back);
      await waitFor(async () => (await t.api('GET', `instance/connectionState/${name}`)).body.instance.state === 'open', 15_000, {
        what: 'the instance to open again',
      });
      await waitFor(() => graph.calls.length > before, 15_000, { what: 'the queued send to leave' });
      expect(back.seen).toContain(graph.host);
    });

    it('logs no proxy password', () => {
      expect(logs.raw.length).toBeGreaterThan(0);
      for (const line of logs.raw) expect(line).not.toContain(PASSWORD);
    });
  });
});
