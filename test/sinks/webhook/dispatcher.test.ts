// Tests of webhook delivery (order, retries, dead letters, signing, restart survival, delivery log) on SQLite and PostgreSQL.

import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../../src/platform/config.js';
import type { EventName } from '../../../src/core/event-catalog.js';
import { SinkConfigs } from '../../../src/events/sink-configs.js';
import { EventWriter } from '../../../src/events/writer.js';
import { WebhookSink } from '../../../src/sinks/webhook/sink.js';
import type { EventSource } from '../../../src/core/event-envelope.js';
import { delayFor } from '../../../src/platform/util/backoff.js';
import { WebhookDispatcher } from '../../../src/sinks/webhook/dispatcher.js';
import { applyJwtKey } from '../../../src/sinks/webhook/jwt-header.js';
import { InvalidCursorError, listDeliveries, redeliver } from '../../../src/sinks/webhook/log.js';
import type { MediaResolver } from '../../../src/sinks/webhook/media-base64.js';
import { signatureHeaders, verifyWebhook } from '../../../src/sinks/webhook/signing.js';
import { silentLogger } from '../../../src/platform/logger.js';
import { openStore, type Store } from '../../../src/platform/store/db.js';
import { inUnit } from '../../../src/platform/store/unit.js';
import { SecretsBox } from '../../../src/platform/util/secrets-box.js';
import { dropPostgresSchema, pgUrl, postgresAvailable } from '../../support/postgres.js';
import { sleep, waitFor } from '../../support/wait.js';

// ---------------------------------------------------------------------------------------------
// Store backends

interface FreshStore {
  uri: string;
  schema?: string;
  /** Removes what the store left behind (after it was closed). */
  drop(): Promise<void>;
}

interface Backend {
  name: string;
  fresh(): Promise<FreshStore>;
}

const sqliteDir = mkdtempSync(join(tmpdir(), 'switchboard-webhook-'));
const backends: Backend[] = [
  {
    name: 'sqlite',
    async fresh() {
      const path = join(sqliteDir, `${randomUUID()}.db`);
      return {
        uri: `file:${path}`,
        async drop() {
          for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
        },
      };
    },
  },
];

if (await postgresAvailable('the PostgreSQL half of the webhook dispatcher tests is')) {
  backends.push({
    name: 'postgres',
    async fresh() {
      const schema = `t_webhook_${randomBytes(6).toString('hex')}`;
      return {
        uri: pgUrl,
        schema,
        drop: () => dropPostgresSchema(schema),
      };
    },
  });
}

// ---------------------------------------------------------------------------------------------
// A loopback receiver whose behaviour is chosen per path prefix

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: Record<string, unknown>;
  at: number;
  /** The status answered, or 'hang' for requests never answered. */
  answer: number | 'hang';
}

type Behaviour = (nth: number) => number | 'hang';

class Receiver {
  readonly received: Received[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly counts = new Map<string, number>();
  private readonly hanging = new Set<ServerResponse>();
  private server!: Server;
  base = '';

  async listen(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const prefix = [...this.behaviours.keys()].filter((p) => path.startsWith(p)).sort((a, b) => b.length - a.length)[0];
        const nth = (this.counts.get(prefix ?? '') ?? 0) + 1;
        this.counts.set(prefix ?? '', nth);
        const answer = prefix ? this.behaviours.get(prefix)!(nth) : 200;
        const raw = Buffer.concat(chunks).toString('utf8');
        this.received.push({ path, headers: req.headers, raw, body: JSON.parse(raw) as Record<string, unknown>, at: Date.now(), answer });
        if (answer === 'hang') {
          this.hanging.add(res);
          res.on('close', () => this.hanging.delete(res));
          return;
        }
        res.statusCode = answer;
        res.end(answer >= 400 ? 'receiver body that must never be stored' : 'ok');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Routes a unique path prefix to a behaviour; returns its URL. */
  route(behaviour: Behaviour = () => 200): string {
    const prefix = `/r-${randomBytes(4).toString('hex')}`;
    this.behaviours.set(prefix, behaviour);
    return this.base + prefix;
  }

  at(url: string): Received[] {
    const path = url.slice(this.base.length);
    return this.received.filter((r) => r.path === path || r.path.startsWith(`${path}/`));
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** How the dispatcher tests poll: every 15 ms, naming what they wait for. */
const poll = (what: string) => ({ what, intervalMs: 15 });

const fastRetries = {
  WEBHOOK_RETRY_INITIAL_DELAY_SECONDS: '0.05',
  WEBHOOK_RETRY_MAX_DELAY_SECONDS: '0.2',
  WEBHOOK_RETRY_BACKOFF_FACTOR: '2',
  WEBHOOK_RETRY_JITTER_FACTOR: '0.2',
  WEBHOOK_RETRY_MAX_ATTEMPTS: '10',
  WEBHOOK_REQUEST_TIMEOUT_MS: '3000',
  OUTBOUND_DENY_PRIVATE: 'false',
  SERVER_URL: 'http://switchboard.test',
};

function whsec(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

function instance(): EventSource {
  return { id: randomUUID(), name: `inst-${randomBytes(3).toString('hex')}`, ownerJid: '5511999990000@s.whatsapp.net' };
}

interface WebhookSettings {
  url: string;
  enabled?: boolean;
  events?: EventName[];
  byEvents?: boolean;
  base64?: boolean;
  headers?: Record<string, string>;
  secret?: string;
}

/** Everything a test needs around one fresh store. */
class Harness {
  store!: Store;
  sinks!: SinkConfigs;
  writer!: EventWriter;
  webhook!: WebhookSink;
  config!: Config;
  private readonly dispatchers: WebhookDispatcher[] = [];

  constructor(
    readonly fresh: FreshStore,
    private readonly env: Record<string, string>,
    readonly box: SecretsBox,
  ) {}

  async open(): Promise<void> {
    this.config = loadConfig({ ...fastRetries, DATABASE_CONNECTION_URI: this.fresh.uri, ...this.env });
    this.store = await openStore(this.fresh.uri, { schema: this.fresh.schema });
    this.sinks = new SinkConfigs(this.store.db);
    await this.sinks.load();
    this.webhook = new WebhookSink({ config: this.config, settings: this.sinks });
    this.writer = new EventWriter(this.config, this.sinks, [this.webhook]);
  }

  dispatcher(extra: { mediaResolver?: MediaResolver } = {}): WebhookDispatcher {
    const dispatcher = new WebhookDispatcher({
      store: this.store,
      config: this.config,
      sinks: this.sinks,
      box: this.box,
      logger: silentLogger(),
      pollMs: 200,
      ...extra,
    });
    this.webhook.onDeliveriesQueued(() => dispatcher.wake());
    this.dispatchers.push(dispatcher);
    return dispatcher;
  }

  async setWebhook(source: EventSource, s: WebhookSettings): Promise<void> {
    await inUnit(this.store.db, async (unit) => {
      await this.sinks.set(unit, source.id, 'webhook', {
        enabled: s.enabled ?? true,
        events: s.events ?? [],
        options: {
          url: s.url,
          byEvents: s.byEvents ?? false,
          base64: s.base64 ?? false,
          headers: s.headers ?? {},
          ...(s.secret ? { secretSealed: this.box.seal(s.secret) } : {}),
        },
        updatedAt: Date.now(),
      });
    });
  }

  async emit(source: EventSource, event: EventName, data: unknown): Promise<string> {
    return inUnit(this.store.db, async (unit) => this.writer.emit(unit, source, event, data).id);
  }

  async rows(instanceName: string) {
    return this.store.db.selectFrom('deliveries').selectAll().where('instance_name', '=', instanceName).orderBy('id').execute();
  }

  /** Waits until no delivery of the instance is pending any more. */
  async settled(instanceName: string, timeoutMs = 8000) {
    return waitFor(
      async () => {
        const rows = await this.rows(instanceName);
        return rows.length > 0 && rows.every((r) => r.state !== 'pending') && rows;
      },
      timeoutMs,
      poll(`deliveries of ${instanceName} to settle`),
    );
  }

  async stopDispatchers(): Promise<void> {
    for (const d of this.dispatchers.splice(0)) await d.stop();
  }

  async close(): Promise<void> {
    await this.stopDispatchers();
    await this.store?.close();
  }
}

/** Checks an HS256 JWT by hand (independently of the code under test) and returns its claims. */
function verifyJwt(token: string, key: string): Record<string, unknown> {
  const [header, payload, signature] = token.split('.');
  const expected = createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url');
  expect(signature).toBe(expected);
  expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
  return JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
}

/** Checks that requests of one lane are ordered: event positions never go back, ids match the header. */
function expectOrdered(requests: Received[], ids: string[]): void {
  let position = 0;
  for (const r of requests) {
    expect(r.headers['webhook-id'] ?? r.body.id).toBe(r.body.id);
    const index = ids.indexOf(r.body.id as string);
    expect(index).toBeGreaterThanOrEqual(0);
    expect(index).toBeGreaterThanOrEqual(position);
    // A later event may only go out once every earlier one was accepted.
    if (index > position) {
      const accepted = new Set(requests.filter((x) => x.answer !== 'hang' && x.answer < 300).map((x) => x.body.id));
      for (const earlier of ids.slice(0, index)) expect(accepted.has(earlier)).toBe(true);
    }
    position = index;
  }
}

// ---------------------------------------------------------------------------------------------
// Pure helpers

describe('webhook helpers', () => {
  it('backs off exponentially, capped, with jitter, never below the first wait', () => {
    const policy = { initialMs: 1000, maxMs: 10_000, factor: 4, jitter: 0.2 };
    expect([1, 2, 3, 4].map((n) => delayFor(policy, n, () => 0.5))).toEqual([1000, 4000, 10_000, 10_000]);
    expect(delayFor(policy, 2, () => 1)).toBe(4800);
    expect(delayFor(policy, 2, () => 0)).toBe(3200);
    expect(delayFor(policy, 1, () => 0)).toBe(1000);
  });

  it('signs in Standard Webhooks form and verifies only the untampered body within tolerance', () => {
    const secret = whsec();
    const body = '{"a":1}';
    const headers = signatureHeaders(secret, 'evt_1', body, 1_700_000_000);
    const key = Buffer.from(secret.slice(6), 'base64');
    const mac = createHmac('sha256', key).update(`evt_1.1700000000.${body}`).digest('base64');
    expect(headers).toEqual({ 'webhook-id': 'evt_1', 'webhook-timestamp': '1700000000', 'webhook-signature': `v1,${mac}` });
    expect(verifyWebhook(secret, headers, body, 300, 1_700_000_100).valid).toBe(true);
    expect(verifyWebhook(secret, headers, '{"a":2}', 300, 1_700_000_100).valid).toBe(false);
    expect(verifyWebhook(secret, headers, body, 300, 1_700_001_000).valid).toBe(false);
    expect(verifyWebhook(whsec(), headers, body, 300, 1_700_000_100).valid).toBe(false);
    const rotated = { ...headers, 'webhook-signature': `v1,AAAA ${headers['webhook-signature']}` };
    expect(verifyWebhook(secret, rotated, body, 300, 1_700_000_100).valid).toBe(true);
  });

  it('replaces jwt_key by a ten-minute bearer token', () => {
    const out = applyJwtKey({ jwt_key: 'k', authorization: 'old', 'X-A': '1' }, 1000);
    expect(Object.keys(out).sort()).toEqual(['Authorization', 'X-A']);
    expect(verifyJwt(out.Authorization!.slice('Bearer '.length), 'k')).toEqual({ iat: 1000, exp: 1600, app: 'evolution', action: 'webhook' });
  });
});

// ---------------------------------------------------------------------------------------------
// Delivery on both stores

describe.each(backends)('webhook dispatcher on $name', (backend) => {
  const receiver = new Receiver();
  const harnesses: Harness[] = [];

  /** A fresh store, or (restart) the store and secrets key of an earlier harness. */
  async function harness(env: Record<string, string> = {}, reopen?: Harness): Promise<Harness> {
    const h = new Harness(reopen?.fresh ?? (await backend.fresh()), env, reopen?.box ?? new SecretsBox(randomBytes(32)));
    harnesses.push(h);
    await h.open();
    return h;
  }

  beforeAll(async () => {
    await receiver.listen();
  });

  afterEach(async () => {
    const dropped = new Set<FreshStore>();
    for (const h of harnesses.splice(0)) {
      await h.close();
      dropped.add(h.fresh);
    }
    for (const fresh of dropped) await fresh.drop();
  });

  afterAll(async () => {
    await receiver.close();
    if (backend.name === 'sqlite') rmSync(sqliteDir, { recursive: true, force: true });
  });

  it('delivers the envelope with destination, by-events suffix, custom headers, jwt_key bearer and a valid signature', async () => {
    const h = await harness();
    const url = receiver.route();
    const secret = whsec();
    const source = instance();
    await h.setWebhook(source, { url, byEvents: true, headers: { 'X-Tenant': 'acme', jwt_key: 'jwt-secret' }, secret });
    h.dispatcher().start();
    const data = { key: { id: 'ABC', remoteJid: '5511@s.whatsapp.net', fromMe: false }, message: { conversation: 'hi' } };
    const started = Math.floor(Date.now() / 1000);
    const id = await h.emit(source, 'MESSAGES_UPSERT', data);

    const [got] = await waitFor(() => receiver.at(url).length === 1 && receiver.at(url), 8000, poll('the delivery'));
    expect(got!.path).toBe(`${new URL(url).pathname}/messages-upsert`);
    expect(Object.keys(got!.body)).toEqual(['id', 'event', 'instance', 'data', 'destination', 'date_time', 'sender', 'server_url', 'apikey']);
    expect(got!.body).toMatchObject({
      id,
      event: 'messages.upsert',
      instance: source.name,
      data,
      // Evolution's destination: the webhook's URL, not the by-events one.
      destination: url,
      sender: source.ownerJid,
      server_url: 'http://switchboard.test',
      apikey: null,
    });
    expect(got!.body.date_time).toMatch(/Z$/);

    const headers = got!.headers;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['user-agent']).toBe('Switchboard-Webhook');
    expect(headers['x-tenant']).toBe('acme');
    expect(headers.jwt_key).toBeUndefined();
    const claims = verifyJwt(String(headers.authorization).replace(/^Bearer /, ''), 'jwt-secret');
    expect(claims).toMatchObject({ app: 'evolution', action: 'webhook' });
    expect((claims.exp as number) - (claims.iat as number)).toBe(600);
    expect(claims.iat as number).toBeGreaterThanOrEqual(started);

    expect(headers['webhook-id']).toBe(id);
    expect(verifyWebhook(secret, headers, got!.raw, 60)).toMatchObject({ valid: true, id });
    expect(verifyWebhook(secret, headers, got!.raw.replace('"hi"', '"hI"'), 60).valid).toBe(false);

    const [row] = await h.settled(source.name);
    expect(row).toMatchObject({ state: 'delivered', attempts: 1, last_status: 200, last_error: null });
    expect(row!.delivered_at).toBeGreaterThan(0);
  });

  it('sends the global webhook without custom headers, signed with WEBHOOK_SIGNING_SECRET (also for instances without a secret)', async () => {
    const globalSecret = whsec();
    const globalUrl = receiver.route();
    const h = await harness({ WEBHOOK_GLOBAL_ENABLED: 'true', WEBHOOK_GLOBAL_URL: globalUrl, WEBHOOK_SIGNING_SECRET: globalSecret });
    const url = receiver.route();
    const source = instance();
    await h.setWebhook(source, { url, headers: { 'X-Tenant': 'acme' } });
    h.dispatcher().start();
    const id = await h.emit(source, 'CONNECTION_UPDATE', { instance: source.name, state: 'open' });

    const [global] = await waitFor(() => receiver.at(globalUrl).length === 1 && receiver.at(globalUrl), 8000, poll('the global delivery'));
    const [own] = await waitFor(() => receiver.at(url).length === 1 && receiver.at(url), 8000, poll('the instance delivery'));
    // The same destination as the instance's own delivery: its webhook's URL (Evolution's rule).
    expect(global!.body).toMatchObject({ id, destination: url, event: 'connection.update' });
    expect(global!.headers['x-tenant']).toBeUndefined();
    expect(verifyWebhook(globalSecret, global!.headers, global!.raw).valid).toBe(true);
    expect(own!.headers['x-tenant']).toBe('acme');
    expect(verifyWebhook(globalSecret, own!.headers, own!.raw).valid).toBe(true);
    const rows = await h.settled(source.name);
    expect(rows.map((r) => [r.target, r.state]).sort()).toEqual([
      ['global', 'delivered'],
      ['instance', 'delivered'],
    ]);
  });

  it('retries a failing receiver and, once it recovers, has every event in order with duplicates only under the same webhook-id', async () => {
    const h = await harness();
    const url = receiver.route((nth) => (nth <= 4 || nth === 7 ? 500 : 200));
    const source = instance();
    await h.setWebhook(source, { url, secret: whsec() });
    h.dispatcher().start();
    const ids: string[] = [];
    for (let seq = 0; seq < 6; seq++) ids.push(await h.emit(source, 'MESSAGES_UPSERT', { seq }));

    const rows = await h.settled(source.name);
    expect(rows.every((r) => r.state === 'delivered')).toBe(true);
    expect(rows[0]!.attempts).toBe(5);
    const requests = receiver.at(url);
    expectOrdered(requests, ids);
    expect(requests.filter((r) => r.answer === 200).map((r) => r.body.id)).toEqual(ids);
    expect(new Set(requests.map((r) => r.headers['webhook-id']))).toEqual(new Set(ids));
  });

  it('keeps a long lane in order across batches read ahead, and a failure holds back the batch already claimed', async () => {
    const h = await harness();
    // The 50th request fails once: the first batch (100) is being sent while the next one is claimed.
    const url = receiver.route((nth) => (nth === 50 ? 500 : 200));
    const source = instance();
    await h.setWebhook(source, { url });
    const ids: string[] = [];
    for (let seq = 0; seq < 130; seq++) ids.push(await h.emit(source, 'MESSAGES_UPSERT', { seq }));
    h.dispatcher().start();
    // More events while the lane is busy: it reads them ahead of its next batch.
    for (let seq = 130; seq < 170; seq++) ids.push(await h.emit(source, 'MESSAGES_UPSERT', { seq }));

    const rows = await h.settled(source.name, 15_000);
    expect(rows).toHaveLength(170);
    expect(rows.every((r) => r.state === 'delivered')).toBe(true);
    const requests = receiver.at(url);
    expectOrdered(requests, ids);
    // The failed one was sent again right after, before anything later went out.
    expect(requests[49]!.answer).toBe(500);
    expect(requests[50]!.body.id).toBe(requests[49]!.body.id);
    expect(requests.filter((r) => r.answer === 200).map((r) => r.body.id)).toEqual(ids);
    expect(rows.map((r) => r.attempts).filter((n) => n !== 1)).toEqual([2]);
  });

  it("sends the head of a lane up to a delivery held elsewhere (another node's claim), and the rest, in order, once it is due", async () => {
    const h = await harness();
    const url = receiver.route();
    const source = instance();
    await h.setWebhook(source, { url });
    const ids: string[] = [];
    for (let seq = 0; seq < 5; seq++) ids.push(await h.emit(source, 'MESSAGES_UPSERT', { seq }));
    // The third delivery is claimed by another node for the next 1.5 s.
    const third = (await h.rows(source.name))[2]!;
    const heldUntil = Date.now() + 1500;
    await h.store.db.updateTable('deliveries').set({ next_attempt_at: heldUntil }).where('id', '=', third.id).execute();
    h.dispatcher().start();

    await waitFor(() => receiver.at(url).length === 2, 8000, poll('the first two'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.at(url).map((r) => r.body.id)).toEqual(ids.slice(0, 2));
    const rows = await h.settled(source.name);
    expect(rows.every((r) => r.state === 'delivered')).toBe(true);
    expect(receiver.at(url).map((r) => r.body.id)).toEqual(ids);
    expect(receiver.at(url)[2]!.at).toBeGreaterThanOrEqual(heldUntil - 5);
  });

  it('dead-letters at once on a non-retryable status, without holding back the next events', async () => {
    const h = await harness();
    const url = receiver.route((nth) => (nth === 1 ? 404 : 200));
    const source = instance();
    await h.setWebhook(source, { url });
    h.dispatcher().start();
    await h.emit(source, 'MESSAGES_UPSERT', { seq: 0 });
    await h.emit(source, 'MESSAGES_UPSERT', { seq: 1 });
    const rows = await h.settled(source.name);
    expect(rows.map((r) => r.state)).toEqual(['dead', 'delivered']);
    expect(rows[0]).toMatchObject({ attempts: 1, last_status: 404 });
    expect(rows[0]!.last_error).toContain('404');
    expect(rows[0]!.last_error).not.toContain('receiver body');
    await sleep(300);
    expect(receiver.at(url)).toHaveLength(2);
  });

  it('dead-letters after the last attempt, and redelivers dead ones with the same webhook-id', async () => {
    const h = await harness({ WEBHOOK_RETRY_MAX_ATTEMPTS: '3' });
    let healthy = false;
    const url = receiver.route(() => (healthy ? 200 : 503));
    const source = instance();
    await h.setWebhook(source, { url });
    const dispatcher = h.dispatcher();
    dispatcher.start();
    const id = await h.emit(source, 'MESSAGES_UPSERT', { seq: 0 });
    const [row] = await h.settled(source.name);
    expect(row).toMatchObject({ state: 'dead', attempts: 3, last_status: 503 });
    expect(row!.last_error).toMatch(/HTTP 503.*gave up after 3 attempts/);
    await sleep(300);
    expect(receiver.at(url)).toHaveLength(3);

    healthy = true;
    expect(await redeliver(h.store.db, { instanceId: 'someone-else', withGlobal: true }, { status: 'dead' })).toEqual({ requeued: 0 });
    expect(await redeliver(h.store.db, { instanceId: source.id, withGlobal: true }, { deliveryId: 999_999 })).toEqual({ requeued: 0 });
    expect(await redeliver(h.store.db, { instanceId: source.id, withGlobal: true }, { status: 'dead' })).toEqual({ requeued: 1 });
    dispatcher.wake();
    const [again] = await h.settled(source.name);
    expect(again).toMatchObject({ state: 'delivered', attempts: 1, last_status: 200, last_error: null });
    const requests = receiver.at(url);
    expect(requests).toHaveLength(4);
    expect(requests.every((r) => r.body.id === id)).toBe(true);
    expect(requests[3]!.answer).toBe(200);
  });

  it('keeps other instances fast while one receiver hangs, and keeps the hanging lane in order', async () => {
    const h = await harness({ WEBHOOK_REQUEST_TIMEOUT_MS: '1000', WEBHOOK_RETRY_MAX_ATTEMPTS: '2' });
    const hangUrl = receiver.route(() => 'hang');
    const fastUrl = receiver.route();
    const a = instance();
    const b = instance();
    await h.setWebhook(a, { url: hangUrl });
    await h.setWebhook(b, { url: fastUrl });
    h.dispatcher().start();
    await h.emit(a, 'MESSAGES_UPSERT', { seq: 'a0' });
    await h.emit(a, 'MESSAGES_UPSERT', { seq: 'a1' });
    await waitFor(() => receiver.at(hangUrl).length === 1, 8000, poll('A to be hanging'));

    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const sentAt = Date.now();
      await h.emit(b, 'MESSAGES_UPSERT', { seq: `b${i}` });
      await waitFor(() => receiver.at(fastUrl).length === i + 1, 1000, poll(`B's event ${i}`));
      latencies.push(Date.now() - sentAt);
    }
    expect(Math.max(...latencies)).toBeLessThan(500);
    // A's second event waits behind its first.
    expect(receiver.at(hangUrl).map((r) => (r.body.data as { seq: string }).seq)).toEqual(['a0']);

    const rows = await h.settled(a.name, 10_000);
    expect(rows.map((r) => r.state)).toEqual(['dead', 'dead']);
    expect(rows[0]!.last_error).toMatch(/no answer within 1000 ms/);
    expect(receiver.at(hangUrl).map((r) => (r.body.data as { seq: string }).seq)).toEqual(['a0', 'a0', 'a1', 'a1']);
  }, 20_000);

  it('survives a restart: stop() aborts what is in flight, a new dispatcher on the reopened store delivers everything', async () => {
    const h = await harness({ WEBHOOK_REQUEST_TIMEOUT_MS: '20000' });
    const url = receiver.route((nth) => (nth === 1 ? 'hang' : 200));
    const source = instance();
    await h.setWebhook(source, { url, secret: whsec() });
    const first = h.dispatcher();
    first.start();
    const ids: string[] = [];
    for (let seq = 0; seq < 3; seq++) ids.push(await h.emit(source, 'MESSAGES_UPSERT', { seq }));
    await waitFor(() => receiver.at(url).length === 1, 8000, poll('the first request to hang'));

    const stopAt = Date.now();
    await first.stop();
    expect(Date.now() - stopAt).toBeLessThan(1000);
    const pending = await h.rows(source.name);
    expect(pending.map((r) => [r.state, r.attempts])).toEqual([
      ['pending', 0],
      ['pending', 0],
      ['pending', 0],
    ]);
    await h.close();

    // A new process: store reopened, settings loaded from it, a new dispatcher.
    const again = await harness({ WEBHOOK_REQUEST_TIMEOUT_MS: '20000' }, h);
    again.dispatcher().start();
    const rows = await again.settled(source.name);
    expect(rows.every((r) => r.state === 'delivered')).toBe(true);
    const requests = receiver.at(url);
    expectOrdered(requests, ids);
    expect(requests.filter((r) => r.answer === 200).map((r) => r.body.id)).toEqual(ids);
    expect(requests[0]!.headers['webhook-id']).toBe(requests[1]!.headers['webhook-id']);
  }, 20_000);

  it('cancels deliveries whose instance webhook was disabled meanwhile; global ones still go', async () => {
    const globalUrl = receiver.route();
    const h = await harness({ WEBHOOK_GLOBAL_ENABLED: 'true', WEBHOOK_GLOBAL_URL: globalUrl });
    const url = receiver.route();
    const source = instance();
    await h.setWebhook(source, { url });
    await h.emit(source, 'MESSAGES_UPSERT', { seq: 0 });
    await h.setWebhook(source, { url, enabled: false });
    h.dispatcher().start();
    const rows = await h.settled(source.name);
    expect(rows.map((r) => [r.target, r.state]).sort()).toEqual([
      ['global', 'delivered'],
      ['instance', 'cancelled'],
    ]);
    expect(rows.find((r) => r.target === 'instance')!.last_error).toMatch(/disabled/);
    expect(receiver.at(url)).toHaveLength(0);
    expect(receiver.at(globalUrl)).toHaveLength(1);
  });

  it('inlines media as data.message.base64 through the resolver when the webhook asks for base64', async () => {
    const h = await harness();
    const url = receiver.route();
    const source = instance();
    await h.setWebhook(source, { url, base64: true });
    const asked: string[] = [];
    h.dispatcher({
      mediaResolver: async (envelope) => {
        asked.push(envelope.id);
        return 'QUJD';
      },
    }).start();
    const image = { key: { id: 'M1' }, message: { imageMessage: { url: 'https://mmg.whatsapp.net/x', mimetype: 'image/jpeg' } } };
    const mediaId = await h.emit(source, 'MESSAGES_UPSERT', image);
    await h.emit(source, 'MESSAGES_UPSERT', { key: { id: 'M2' }, message: { conversation: 'text' } });
    await h.emit(source, 'MESSAGES_UPDATE', { keyId: 'M1', status: 'READ' });
    await h.settled(source.name);
    const [media, text, update] = receiver.at(url);
    expect(media!.body.data).toEqual({ ...image, message: { ...image.message, base64: 'QUJD' } });
    expect(text!.body.data).toEqual({ key: { id: 'M2' }, message: { conversation: 'text' } });
    expect(update!.body.data).toEqual({ keyId: 'M1', status: 'READ' });
    expect(asked).toEqual([mediaId]);
    // The stored event stays as it was.
    const stored = await h.store.db.selectFrom('outbox').select('body').where('id', '=', mediaId).executeTakeFirstOrThrow();
    expect(JSON.parse(stored.body).data).toEqual(image);
  });

  it('lists deliveries newest first with a cursor and a status filter, only for the instance asked', async () => {
    const h = await harness();
    const url = receiver.route((nth) => (nth % 3 === 0 ? 404 : 200));
    const source = instance();
    const other = instance();
    await h.setWebhook(source, { url });
    await h.setWebhook(other, { url: receiver.route() });
    h.dispatcher().start();
    for (let seq = 0; seq < 7; seq++) await h.emit(source, 'MESSAGES_UPSERT', { seq });
    await h.emit(other, 'MESSAGES_UPSERT', { seq: 0 });
    await h.settled(source.name);
    await h.settled(other.name);

    const pages = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = await listDeliveries(h.store.db, { instanceId: source.id, withGlobal: true }, { limit: 3, cursor });
      pages.push(page);
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(pages.map((p) => p.deliveries.length)).toEqual([3, 3, 1]);
    const all = pages.flatMap((p) => p.deliveries);
    const ids = all.map((d) => d.id);
    expect(ids).toEqual([...ids].sort((x, y) => y - x));
    expect(new Set(ids).size).toBe(7);
    expect(all.every((d) => d.url === url && d.event === 'MESSAGES_UPSERT' && d.target === 'instance')).toBe(true);
    const newest = all[0]!;
    expect(newest).toMatchObject({ attempts: 1, nextAttemptAt: null });
    expect(Date.parse(newest.createdAt)).toBeGreaterThan(0);

    const dead = await listDeliveries(h.store.db, { instanceId: source.id, withGlobal: true }, { status: 'dead' });
    expect(dead.deliveries.map((d) => [d.status, d.lastStatus])).toEqual([
      ['dead', 404],
      ['dead', 404],
    ]);
    expect(dead.nextCursor).toBeNull();
    const delivered = await listDeliveries(h.store.db, { instanceId: source.id, withGlobal: true }, { status: 'delivered' });
    expect(delivered.deliveries).toHaveLength(5);
    expect(delivered.deliveries.every((d) => d.deliveredAt !== null && d.lastError === null)).toBe(true);
    expect((await listDeliveries(h.store.db, { instanceId: other.id, withGlobal: true })).deliveries).toHaveLength(1);
    expect((await listDeliveries(h.store.db, { instanceId: 'nobody', withGlobal: true })).deliveries).toHaveLength(0);
    expect((await listDeliveries(h.store.db, { instanceId: source.id, withGlobal: true }, { limit: 0 })).deliveries).toHaveLength(1);
    await expect(listDeliveries(h.store.db, { instanceId: source.id, withGlobal: true }, { cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(
      InvalidCursorError,
    );

    // Redelivery by id: only the instance's own rows (dispatcher stopped so the row stays visible as pending).
    await h.stopDispatchers();
    const otherRow = (await h.rows(other.name))[0]!;
    expect(await redeliver(h.store.db, { instanceId: source.id, withGlobal: true }, { deliveryId: Number(otherRow.id) })).toEqual({ requeued: 0 });
    expect(await redeliver(h.store.db, { instanceId: source.id, withGlobal: true }, { deliveryId: dead.deliveries[0]!.id })).toEqual({ requeued: 1 });
    const requeued = await listDeliveries(h.store.db, { instanceId: source.id, withGlobal: true }, { status: 'pending' });
    expect(requeued.deliveries.map((d) => d.id)).toEqual([dead.deliveries[0]!.id]);
  });
});
