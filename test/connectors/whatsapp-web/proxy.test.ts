// The instance's proxy at the Baileys boundary: the agent built from the stored settings is what the socket is given
// (websocket and uploads), downloads take its dispatcher, a change reconnects, an unusable proxy shows in the state.
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, get, type Agent as HttpAgent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BaileysEventMap, UserFacingSocketConfig } from 'baileys';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { ProxyAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/platform/config.js';
import { silentLogger } from '../../../src/platform/logger.js';
import { openStore } from '../../../src/platform/store/db.js';
import { createServices, type Services } from '../../../src/services.js';
import { defaultSettings, type Instance } from '../../../src/core/instance.js';
import type { Connector } from '../../../src/core/connector.js';
import { createWhatsAppWebFactory, waWebDefaults, type WaSocket } from '../../../src/connectors/whatsapp-web/index.js';
import { downloadMedia } from '../../../src/connectors/whatsapp-web/message-actions.js';
import { sharedProxyDispatcher } from '../../../src/platform/net/proxy-dispatcher.js';
import { encryptMedia } from '../../../src/media/crypto.js';
import { RecordingHost } from '../../support/recording-host.js';
import {
  danteAvailable,
  startHttpProxy,
  startHttpsProxy,
  startSocks4Proxy,
  startSocksProxy,
  testTls,
  type TestProxy,
  type TlsFiles,
} from '../../support/proxies.js';
import { waitFor } from '../../support/wait.js';

const PASSWORD = 'wa-proxy-pw-K3y';
const auth = { username: 'wa', password: PASSWORD };

/** The little of a Baileys socket this file needs: it records the config it was made with and can report a close. */
class ConfigRecordingSocket {
  readonly emitter = new EventEmitter();
  readonly ev = { on: <T extends keyof BaileysEventMap>(event: T, listener: (arg: BaileysEventMap[T]) => void) => this.emitter.on(event, listener) };
  readonly ws = new EventEmitter();
  ended = false;
  constructor(readonly config: UserFacingSocketConfig) {}
  async end(): Promise<void> {
    this.ended = true;
  }
  close(error: Error): void {
    this.emitter.emit('connection.update', { connection: 'close', lastDisconnect: { error, date: new Date() } });
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

interface World {
  services: Services;
  instance: Instance;
  host: RecordingHost;
  connector: Connector;
  sockets: ConfigRecordingSocket[];
}

async function world(): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'wa-proxy-'));
  const uri = `file:${join(dir, 'test.db')}`;
  const store = await openStore(uri);
  const config = loadConfig({ DATA_DIR: dir, DATABASE_CONNECTION_URI: uri, LOG_LEVEL: 'silent' });
  const services = createServices({ config, logger: silentLogger(), store, globalApiKey: 'global-test-key', secretsKey: randomBytes(32) });
  const { instance } = await services.instances.create({ name: 'wa-proxied', integration: 'WHATSAPP-BAILEYS', settings: defaultSettings, sinks: [] });
  const host = new RecordingHost(services.connectorHost);
  const sockets: ConfigRecordingSocket[] = [];
  const connector = createWhatsAppWebFactory({
    config: {
      qrcodeLimit: 30,
      qrcodeColor: '#198754',
      logLevel: 'silent',
      waWeb: { ...waWebDefaults, webSocketUrl: 'ws://127.0.0.1:9/unused', reconnectBaseMs: 60_000, reconnectMaxMs: 60_000 },
    },
    logger: silentLogger(),
    socketFactory: (socketConfig) => {
      const socket = new ConfigRecordingSocket(socketConfig);
      sockets.push(socket);
      return socket as unknown as WaSocket;
    },
    tuning: { firstQrWaitMs: 20, random: () => 0.5 },
  })(instance, host);
  cleanups.push(async () => {
    await connector.stop();
    await services.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { services, instance, host, connector, sockets };
}

/** A plain HTTP server answering "reached"; a request to it through an agent shows the agent's route. */
async function startTarget(): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => res.end('reached'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as AddressInfo).port, close: async () => undefined };
}

/** GET through `agent`: the body, or the error the agent failed with. */
function getThrough(agent: HttpAgent, port: number): Promise<string | Error> {
  return new Promise((resolve) => {
    get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve(body));
    }).on('error', resolve);
  });
}

async function proxied<P extends TestProxy>(start: () => Promise<P>): Promise<P> {
  const proxy = await start();
  cleanups.push(() => proxy.close());
  return proxy;
}

describe('the WhatsApp Web connector behind a proxy (at the Baileys boundary)', () => {
  it('hands Baileys an HTTP CONNECT agent with the credentials for the websocket and uploads, and a dispatcher for downloads', async () => {
    const proxy = await proxied(() => startHttpProxy({ auth }));
    const w = await world();
    await w.services.proxies.set(w.instance, {
      enabled: true,
      host: '127.0.0.1',
      port: String(proxy.port),
      protocol: 'http',
      username: 'wa',
      password: PASSWORD,
    });
    await w.connector.start();
    const config = w.sockets[0].config;
    expect(config.agent).toBeInstanceOf(HttpsProxyAgent);
    expect((config.agent as HttpsProxyAgent<string>).proxy.href).toBe(`http://127.0.0.1:${proxy.port}/`);
    expect(config.fetchAgent).toBe(config.agent);
    expect((config.options as { dispatcher?: unknown }).dispatcher).toBeInstanceOf(ProxyAgent);

    // The agent Baileys got really goes through the proxy, which accepts its credentials.
    const target = await startTarget();
    expect(await getThrough(config.agent as HttpAgent, target.port)).toBe('reached');
    expect(proxy.seen).toContain(`127.0.0.1:${target.port}`);
    expect(proxy.refused).toBe(0);
  });

  it('hands Baileys a SOCKS5 agent; a change of proxy replaces the socket with one through the new proxy', async () => {
    const http = await proxied(() => startHttpProxy());
    const socks = await proxied(() => startSocksProxy({ auth }));
    const w = await world();
    await w.connector.start();
    expect(w.sockets[0].config.agent).toBeUndefined();

    await w.services.proxies.set(w.instance, { enabled: true, host: '127.0.0.1', port: http.port, protocol: 'http' });
    await w.connector.proxyChanged?.();
    expect(w.sockets).toHaveLength(2);
    expect(w.sockets[0].ended).toBe(true);
    expect(w.sockets[1].config.agent).toBeInstanceOf(HttpsProxyAgent);

    await w.services.proxies.set(w.instance, { enabled: true, host: '127.0.0.1', port: socks.port, protocol: 'socks5', username: 'wa', password: PASSWORD });
    await w.connector.proxyChanged?.();
    const agent = w.sockets[2].config.agent;
    expect(agent).toBeInstanceOf(SocksProxyAgent);
    const target = await startTarget();
    expect(await getThrough(agent as HttpAgent, target.port)).toBe('reached');
    expect(socks.seen).toContain(`127.0.0.1:${target.port}`);

    await w.services.proxies.set(w.instance, { enabled: false });
    await w.connector.proxyChanged?.();
    expect(w.sockets[3].config.agent).toBeUndefined();
  });

  const tls = testTls();
  it.skipIf(!tls)('hands Baileys an agent that speaks TLS to an HTTPS proxy, then CONNECT', async () => {
    const proxy = await proxied(() => startHttpsProxy(tls as TlsFiles, { auth }));
    const w = await world();
    await w.services.proxies.set(w.instance, {
      enabled: true,
      host: '127.0.0.1',
      port: String(proxy.port),
      protocol: 'https',
      username: 'wa',
      password: PASSWORD,
    });
    await w.connector.start();
    const agent = w.sockets[0].config.agent;
    expect((agent as HttpsProxyAgent<string>).proxy.href).toBe(`https://127.0.0.1:${proxy.port}/`);
    const target = await startTarget();
    expect(await getThrough(agent as HttpAgent, target.port)).toBe('reached');
    expect(proxy.seen).toContain(`127.0.0.1:${target.port}`);
    expect(proxy.refused).toBe(0);
  });

  it.skipIf(!danteAvailable())('hands Baileys a SOCKS4 agent that a SOCKS4-only server (Dante) accepts', async () => {
    const proxy = await proxied(() => startSocks4Proxy());
    const w = await world();
    await w.services.proxies.set(w.instance, { enabled: true, host: '127.0.0.1', port: String(proxy.port), protocol: 'socks4' });
    await w.connector.start();
    const agent = w.sockets[0].config.agent;
    expect(agent).toBeInstanceOf(SocksProxyAgent);
    const target = await startTarget();
    expect(await getThrough(agent as HttpAgent, target.port)).toBe('reached');
    await waitFor(() => proxy.seen.includes(`127.0.0.1:${target.port}`), 5_000, { what: () => `Dante's log: ${proxy.seen}` });
  });

  it('says why when the proxy cannot be reached: connecting, with the reason, in the state and in connection.update', async () => {
    const proxy = await startHttpProxy();
    const port = proxy.port;
    const w = await world();
    await w.services.proxies.set(w.instance, { enabled: true, host: '127.0.0.1', port: String(port), protocol: 'http' });
    await proxy.close();
    await w.connector.start();
    // What the agent Baileys was given fails with, wrapped as Baileys wraps websocket errors (a Boom with the error as data).
    const failure = await getThrough(w.sockets[0].config.agent as HttpAgent, 9);
    expect(failure).toBeInstanceOf(Error);
    w.sockets[0].close(
      Object.assign(new Error(`WebSocket Error (${(failure as Error).message})`), { isBoom: true, output: { statusCode: 500 }, data: failure }),
    );

    const reason = `the proxy http://127.0.0.1:${port} refused the connection (ECONNREFUSED)`;
    await waitFor(() => w.connector.stateReason?.() === reason, 5_000, { what: () => `stateReason (got ${w.connector.stateReason?.()})` });
    expect(w.connector.state()).toBe('connecting');
    const changes = w.host.calls.filter((c) => c.method === 'connectionChanged').map((c) => c.args[0]);
    expect(changes).toContainEqual({ state: 'connecting', reason, statusReason: 503 });
  });

  it('downloads WhatsApp media through the proxy dispatcher (Baileys fetches with it)', async () => {
    const proxy = await proxied(() => startSocksProxy({ auth }));
    const plain = Buffer.from('media behind a proxy');
    const encrypted = await encryptMedia(plain, 'image');
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(encrypted.encrypted));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const mediaPort = (server.address() as AddressInfo).port;
    const node = { directPath: '/v/t62/pic.enc', mediaKey: Buffer.from(encrypted.mediaKey).toString('base64') };
    const dispatcher = sharedProxyDispatcher({ protocol: 'socks5', host: '127.0.0.1', port: proxy.port, username: 'wa', password: PASSWORD }, false);
    const bytes = await downloadMedia(node, 'imageMessage', 1_000_000, `http://127.0.0.1:${mediaPort}`, dispatcher);
    expect(bytes.equals(plain)).toBe(true);
    expect(proxy.seen).toContain(`127.0.0.1:${mediaPort}`);
  });
});
