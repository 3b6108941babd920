// Real proxy servers on loopback for tests: an HTTP CONNECT proxy (the `proxy` package) and a SOCKS5 server
// (@pondwader/socks5-server), each optionally asking for credentials and recording where it was asked to connect.
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { createProxy } from 'proxy';
import { createServer as createSocksServer } from '@pondwader/socks5-server';

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
export async function startHttpProxy(options: ProxyOptions = {}): Promise<TestProxy> {
  const seen: string[] = [];
  let refused = 0;
  const server: Server = createServer();
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
