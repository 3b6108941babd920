// Test harness: the real app on a real store (SQLite file or a PostgreSQL schema), listening on loopback.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/platform/config.js';
import { silentLogger, type Logger } from '../../src/platform/logger.js';
import { openStore, type Store } from '../../src/platform/store/db.js';
import { createServices, type ServiceOptions, type Services } from '../../src/services.js';
import { buildApp } from '../../src/app.js';
import { dropPostgresSchema, pgUrl, postgresAvailable } from './postgres.js';
import { waitFor } from './wait.js';
import { freePort } from './service-process.js';
import type { KindEntry } from '../../src/connectors/kinds.js';

export interface StoreTarget {
  name: 'sqlite' | 'postgres';
  available: boolean;
  open(): Promise<{ uri: string; store: Store; dispose(): Promise<void> }>;
}

/**
 * A store of `target` opened before the suite's tests and closed (and removed) after them; call inside a describe.
 * Answers a getter: the store exists only once the suite has started.
 */
export function suiteStore(target: StoreTarget): () => Store {
  let opened: Awaited<ReturnType<StoreTarget['open']>> | undefined;
  beforeAll(async () => {
    opened = await target.open();
  });
  afterAll(async () => {
    if (!opened) return;
    await opened.store.close();
    await opened.dispose();
  });
  return () => {
    if (!opened) throw new Error('the suite store is opened before the tests run');
    return opened.store;
  };
}

/** The stores every store/API suite runs on. PostgreSQL missing: a loud skip, or a failure under REQUIRE_SERVICES=1. */
export async function storeTargets(): Promise<StoreTarget[]> {
  const pgUp = await postgresAvailable('the PostgreSQL variants of these suites are');
  return [
    {
      name: 'sqlite',
      available: true,
      async open() {
        const dir = mkdtempSync(join(tmpdir(), 'sb-sqlite-'));
        const uri = `file:${join(dir, 'test.db')}`;
        const store = await openStore(uri);
        return { uri, store, dispose: async () => rmSync(dir, { recursive: true, force: true }) };
      },
    },
    {
      name: 'postgres',
      available: pgUp,
      async open() {
        const schema = `t_${randomBytes(6).toString('hex')}`;
        const store = await openStore(pgUrl, { schema });
        return {
          uri: pgUrl,
          store,
          dispose: () => dropPostgresSchema(schema),
        };
      },
    },
  ];
}

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers and delivered event bodies field by field
type Json = any;

export interface TestApp {
  url: string;
  globalKey: string;
  services: Services;
  app: FastifyInstance;
  dataDir: string;
  /** Calls the API: path relative to /messenger unless it starts with '/'. The body is JSON of any shape the test inspects. */
  api(
    method: string,
    path: string,
    options?: { body?: unknown; key?: string | null; headers?: Record<string, string> },
  ): Promise<{ status: number; body: Json; headers: Headers }>;
  close(): Promise<void>;
}

/** The real app on a store of `target`; `env` overrides settings; `logger`: where its logs go (none by default). */
export async function startApp(
  target: StoreTarget,
  env: Record<string, string> = {},
  logger: Logger = silentLogger(),
  /** The connector kinds to register instead of the service's four (a test adds one). */
  kinds?: readonly KindEntry[],
  /** What the test drives itself (the pacing gates' clock). */
  driven: Pick<ServiceOptions, 'pacingClock'> = {},
): Promise<TestApp> {
  const opened = await target.open();
  const app = await appOnStore(opened, { globalKey: `global-${randomBytes(8).toString('hex')}`, secretsKey: randomBytes(32) }, env, logger, kinds, driven);
  return {
    ...app,
    async close() {
      await app.close();
      await opened.store.close();
      await opened.dispose();
    },
  };
}

/**
 * `count` nodes of one fleet in this process, on one fresh PostgreSQL schema: each its own store connection, data
 * folder, NODE_ID (`node-1`…) and port (its NODE_ADDRESS), all with the same global key and secrets key (as a fleet's
 * nodes are given). `env` applies to every node; `envOf(i)` adds a node's own (i from 0).
 */
export async function startFleet(
  count: number,
  env: Record<string, string> = {},
  envOf: (index: number) => Record<string, string> = () => ({}),
): Promise<{ nodes: TestApp[]; schema: string; uri: string; addNode(extra?: Record<string, string>): Promise<TestApp>; close(): Promise<void> }> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const shared = { globalKey: `global-${randomBytes(8).toString('hex')}`, secretsKey: randomBytes(32) };
  const nodes: TestApp[] = [];
  const stores: Store[] = [];
  const addNode = async (extra: Record<string, string> = {}) => {
    const index = nodes.length;
    const store = await openStore(pgUrl, { schema });
    stores.push(store);
    const opened = { uri: pgUrl, store, dispose: async () => undefined };
    const node = await appOnStore(opened, shared, { NODE_ID: `node-${index + 1}`, ...env, ...envOf(index), ...extra });
    nodes.push(node);
    return node;
  };
  for (let i = 0; i < count; i++) await addNode();
  const url = new URL(pgUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    nodes,
    schema,
    uri: url.toString(),
    addNode,
    async close() {
      for (const node of nodes) await node.close().catch(() => undefined);
      for (const store of stores) await store.close().catch(() => undefined);
      await dropPostgresSchema(schema);
    },
  };
}

/** The app on an opened store, listening on a loopback port of its own (its NODE_ADDRESS); close() leaves the store open. */
async function appOnStore(
  opened: { uri: string; store: Store },
  shared: { globalKey: string; secretsKey: Buffer },
  env: Record<string, string>,
  logger: Logger = silentLogger(),
  kinds?: readonly KindEntry[],
  driven: Pick<ServiceOptions, 'pacingClock'> = {},
): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sb-data-'));
  const { globalKey } = shared;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    AUTHENTICATION_API_KEY: globalKey,
    DATA_DIR: dataDir,
    DATABASE_CONNECTION_URI: opened.uri,
    LOG_LEVEL: 'silent',
    WEBHOOK_RETRY_INITIAL_DELAY_SECONDS: '0.05',
    WEBHOOK_RETRY_MAX_DELAY_SECONDS: '0.2',
    // WhatsApp Web instances must never reach WhatsApp from tests: a closed loopback port instead.
    WA_WEBSOCKET_URL: 'ws://127.0.0.1:9/ws/chat',
    SERVER_URL: url,
    NODE_ADDRESS: url,
    ...env,
  });
  const services = createServices({
    config,
    logger,
    store: opened.store,
    globalApiKey: globalKey,
    secretsKey: shared.secretsKey,
    ...(kinds ? { kinds } : {}),
    ...driven,
  });
  await services.start();
  const app = await buildApp(services);
  await app.listen({ port, host: '127.0.0.1' });
  let closed = false;
  return {
    url,
    globalKey,
    services,
    app,
    dataDir,
    async api(method, path, options = {}) {
      const key = options.key === undefined ? globalKey : options.key;
      const headers: Record<string, string> = { ...(options.headers ?? {}) };
      if (key !== null) headers.apikey = key;
      let body: string | undefined;
      if (options.body !== undefined) {
        body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      const full = path.startsWith('/') ? `${url}${path}` : `${url}/messenger/${path}`;
      const response = await fetch(full, { method, headers, body });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // Non-JSON answers (docs HTML) are returned as text.
      }
      return { status: response.status, body: parsed, headers: response.headers };
    },
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await services.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ReceivedEvent {
  path: string;
  headers: IncomingHttpHeaders;
  body: Json;
}

/** A real HTTP receiver on loopback that records every webhook delivery. */
export async function startReceiver(answer: (event: ReceivedEvent) => number = () => 200) {
  const events: ReceivedEvent[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const event = { path: req.url ?? '/', headers: req.headers, body: raw ? JSON.parse(raw) : null };
      const status = answer(event);
      if (status >= 200 && status < 300) events.push(event);
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    events,
    of(name: string, instance?: string) {
      return events.filter((e) => e.body?.event === name && (!instance || e.body?.instance === instance));
    },
    async waitFor(predicate: (events: ReceivedEvent[]) => boolean, timeoutMs = 5000): Promise<void> {
      await waitFor(() => predicate(events), timeoutMs, { what: () => `receiver: condition (got ${events.map((e) => e.body?.event).join(', ')})` });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A webhook receiver started by `startReceiver`. */
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** Creates a SANDBOX instance and links it through the QR flow with the given number. */
export async function linkedSandbox(t: TestApp, name: string, number: string, extra: Record<string, unknown> = {}) {
  const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX', qrcode: true, ...extra } });
  if (created.status !== 201) throw new Error(`create ${name}: ${created.status} ${JSON.stringify(created.body)}`);
  const scan = await t.api('POST', 'sandbox/scan', { body: { code: created.body.qrcode.code, number } });
  if (scan.status !== 200) throw new Error(`scan ${name}: ${scan.status} ${JSON.stringify(scan.body)}`);
  return { apikey: created.body.hash.apikey as string, id: created.body.instance.instanceId as string, owner: scan.body.instance.owner as string };
}
