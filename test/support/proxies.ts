// Real proxy servers on loopback for tests: an HTTP CONNECT proxy (the `proxy` package), the same behind TLS (an
// HTTPS proxy), a SOCKS5 server (@pondwader/socks5-server), each optionally asking for credentials, and a SOCKS4-only
// Dante server (Debian's dante-server); each records where it was asked to connect.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { join } from 'node:path';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { createProxy } from 'proxy';
import { createServer as createSocksServer } from '@pondwader/socks5-server';
import { serviceAvailable } from './required-services.js';
import { testTlsDirVariable } from './test-ca.js';
import { freePort } from './service-process.js';
import { waitFor } from './wait.js';

export interface TestProxy {
  port: number;
  /** `host:port` of every tunnel (or plain request) the proxy was asked for, credentials accepted or not. */
  readonly seen: string[];
  /** Requests refused for their credentials. */
  readonly refused: number;
  close(): Promise<void>;
}

export interface ProxyOptions {
  /** Credentials the proxy requires; absent: none. */
  auth?: { username: string; password: string };
  /** Listen on this port (to bring a stopped proxy back at its address). */
  port?: number;
}

/** An HTTP proxy (CONNECT tunnels and plain requests) on 127.0.0.1. */
export function startHttpProxy(options: ProxyOptions = {}): Promise<TestProxy> {
  return startConnectProxy(createServer(), options);
}

/**
 * The test certificate authority's files (test/support/test-ca.ts), or null when it could not be made here: then a
 * loud skip, or a failure under REQUIRE_SERVICES=1.
 */
export function testTls(): (TlsFiles & { untrusted: TlsFiles }) | null {
  const dir = process.env[testTlsDirVariable];
  const problem = dir ? null : 'no certificate authority was made for this run (openssl missing?)';
  if (!serviceAvailable('a test certificate authority', 'openssl', problem, 'HTTPS proxy tests')) return null;
  const read = (name: string) => ({ key: readFileSync(join(dir as string, `${name}.key`)), cert: readFileSync(join(dir as string, `${name}.pem`)) });
  // `untrusted`: self-signed, a certificate no test process trusts.
  return { ...read('server'), untrusted: read('untrusted') };
}

export interface TlsFiles {
  key: Buffer;
  cert: Buffer;
}

/**
 * An HTTPS proxy on 127.0.0.1: the HTTP proxy behind TLS (the client speaks TLS to the proxy, then CONNECT), with a
 * certificate of the test certificate authority, which every test process trusts.
 */
export function startHttpsProxy(tls: TlsFiles, options: ProxyOptions = {}): Promise<TestProxy> {
  return startConnectProxy(createHttpsServer(tls), options);
}

async function startConnectProxy(server: Server, options: ProxyOptions): Promise<TestProxy> {
  const seen: string[] = [];
  let refused = 0;
  // Registered before the proxy's own listeners: sees every request first.
  server.on('connect', (req) => seen.push(req.url ?? ''));
  server.on('request', (req) => seen.push(new URL(req.url ?? '/', 'http://unknown').host));
  const proxy = createProxy(server);
  if (options.auth) {
    const expected = `Basic ${Buffer.from(`${options.auth.username}:${options.auth.password}`).toString('base64')}`;
    proxy.authenticate = (req) => {
      const ok = req.headers['proxy-authorization'] === expected;
      if (!ok) refused += 1;
      return ok;
    };
  }
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    get refused() {
      return refused;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A SOCKS5 server on 127.0.0.1. */
export async function startSocksProxy(options: ProxyOptions = {}): Promise<TestProxy> {
  const seen: string[] = [];
  let refused = 0;
  const server = createSocksServer();
  if (options.auth) {
    const { username, password } = options.auth;
    server.setAuthHandler((conn) => {
      const ok = conn.username === username && conn.password === password;
      if (!ok) refused += 1;
      return ok;
    });
  }
  server.setRulesetValidator((conn) => {
    seen.push(`${conn.destAddress}:${conn.destPort}`);
    return true;
  });
  // The package's own listener is private: connections are handed to it from a server of ours, whose sockets a
  // close can end.
  const sockets = new Set<Socket>();
  const listener = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    server._handleConnection(socket);
  });
  await new Promise<void>((resolve) => listener.listen(options.port ?? 0, '127.0.0.1', resolve));
  return {
    port: (listener.address() as AddressInfo).port,
    seen,
    get refused() {
      return refused;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        listener.close(() => resolve());
      }),
  };
}

/** A port nothing listens on (taken, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const danted = '/usr/sbin/danted';

/** Whether Dante can be started here: else a loud skip, or a failure under REQUIRE_SERVICES=1. */
export function danteAvailable(): boolean {
  const problem = existsSync(danted) ? null : 'not installed (Debian: apt-get install dante-server)';
  return serviceAvailable('the Dante SOCKS server', danted, problem, 'SOCKS4 proxy tests');
}

/**
 * Debian's Dante server on 127.0.0.1, in the foreground, speaking SOCKS4 only (a SOCKS5 client is refused), no
 * credentials; what it was asked to connect to is read from its log.
 */
export async function startSocks4Proxy(): Promise<TestProxy> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sb-dante-'));
  const config = join(dir, 'danted.conf');
  writeFileSync(
    config,
    [
      'logoutput: stderr',
      `internal: 127.0.0.1 port = ${port}`,
      'external: 127.0.0.1',
      'clientmethod: none',
      'socksmethod: none',
      'user.privileged: root',
      'user.unprivileged: nobody',
      'client pass {',
      '  from: 127.0.0.0/8 to: 0.0.0.0/0',
      '}',
      'socks pass {',
      '  from: 127.0.0.0/8 to: 0.0.0.0/0',
      '  protocol: tcp',
      '  command: connect',
      '  proxyprotocol: socks_v4',
      '  log: connect',
      '}',
      '',
    ].join('\n'),
  );
  const child = spawn(danted, ['-f', config, '-N', '1'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const seen: string[] = [];
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log += chunk.toString();
    // "pass(1): tcp/connect [: <client> <proxy> -> <proxy's side> <destination>", addresses as host.port
    for (const match of chunk.toString().matchAll(/tcp\/connect \[: \S+ \S+ -> \S+ (\S+)\.(\d+)/g)) seen.push(`${match[1]}:${match[2]}`);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`danted exited at start: ${log}`);
      return /running/.test(log);
    },
    10_000,
    { what: () => `danted to start: ${log}` },
  );
  return {
    port,
    seen,
    refused: 0,
    close: async () => {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
