// Tests of the RabbitMQ and NATS relays against the real brokers, on SQLite and PostgreSQL: routing, filters, outages.
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as amqpConnect, type ChannelModel, type ConsumeMessage } from 'amqplib';
import Fastify, { type FastifyInstance } from 'fastify';
import { connect as natsConnect, type JetStreamManager, type NatsConnection, type Subscription } from 'nats';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyCallers, registerAuth } from '../../../src/platform/http/auth.js';
import { registerErrorHandling } from '../../../src/platform/http/error-handler.js';
import { eventCatalog, type EventName } from '../../../src/core/event-catalog.js';
import type { BrokerConfig } from '../../../src/sinks/broker-relay/settings.js';
import type { BrokerTuning } from '../../../src/sinks/broker-relay/deps.js';
import type { OutboxRelay } from '../../../src/sinks/broker-relay/relay.js';
import { rabbitmqSink } from '../../../src/sinks/rabbitmq/index.js';
import { natsSink } from '../../../src/sinks/nats/index.js';
import { rabbitmqMark } from '../../../src/sinks/rabbitmq/mark.js';
import { natsMark } from '../../../src/sinks/nats/mark.js';
import { BrokerRouter } from '../../../src/sinks/broker-relay/routing.js';
import type { OutboxRow } from '../../../src/events/outbox-feed.js';
import type { SinkConfig } from '../../../src/events/sink-configs.js';
import { covers, validSubject } from '../../../src/sinks/nats/stream.js';
import { globalWants, safeAddress } from '../../../src/sinks/broker-relay/settings.js';
import { withHeartbeat } from '../../../src/sinks/rabbitmq/publisher.js';
import { serversAndCredentials } from '../../../src/sinks/nats/publisher.js';
import { inUnit } from '../../../src/platform/store/unit.js';
import { linkedSandbox, startApp, storeTargets, type TestApp } from '../../support/harness.js';
import { sleep, waitFor } from '../../support/wait.js';
import { freePort } from '../../support/service-process.js';
import { AMQP_URI, NATS_URL, natsAvailable, rabbitAvailable } from '../../support/brokers.js';

const NATS_SERVER_BIN = process.env.TEST_NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
const logger = pino({ level: process.env.TEST_BROKER_LOG ?? 'silent' });

// ---------------------------------------------------------------------------------------------
// Which services answer

const [rabbitUp, natsUp] = await Promise.all([rabbitAvailable('its broker tests are'), natsAvailable('its broker tests are')]);
const targets = await storeTargets();

// ---------------------------------------------------------------------------------------------
// Helpers

const fast: BrokerTuning = {
  relay: { pollMs: 200, backoff: { initialMs: 100, maxMs: 800, factor: 2, jitter: 0.2 } },
  confirmTimeoutMs: 3000,
  connectTimeoutMs: 2000,
};

function phoneNumber(): string {
  return `5511${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
}

function runId(): string {
  return randomBytes(4).toString('hex');
}

function brokerConfig(run: string, over: Partial<BrokerConfig>): BrokerConfig {
  return {
    rabbitmqEnabled: false,
    rabbitmqUri: undefined,
    rabbitmqExchangeName: `sbtest_global_${run}`,
    rabbitmqGlobalEnabled: false,
    rabbitmqGlobalEvents: {},
    // Unique global queue names, so that runs never share queues on the broker.
    rabbitmqPrefixKey: `sbtest_${run}`,
    rabbitmqDeclareQueues: true,
    natsEnabled: false,
    natsUrl: undefined,
    natsGlobalEnabled: false,
    natsGlobalEvents: {},
    natsPrefixKey: `sbtest_${run}`,
    natsStream: `SBTEST_${run}`,
    natsStreamMaxAgeMs: 3600_000,
    ...over,
  };
}

/** Each broker's bit in an outbox event's `broker_wants`. */
const brokerBit = { rabbitmq: rabbitmqMark, nats: natsMark };

interface BrokerRelays {
  rabbitmq?: OutboxRelay;
  nats?: OutboxRelay;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The relays of the brokers `config` enables, as the broker sinks build them (they poll the outbox). */
function relaysFor(t: TestApp, config: BrokerConfig, tuning: BrokerTuning = fast): BrokerRelays {
  // Leased by the test app's node (its heartbeat keeps it alive while the test runs).
  const node = { incarnation: t.services.nodes.incarnation, deadAfterMs: t.services.config.nodeDeadAfterMs };
  const deps = { config, store: t.services.store, sinks: t.services.sinks, logger, tuning, node };
  const sinks = [rabbitmqSink(deps), natsSink(deps)];
  return {
    rabbitmq: sinks[0].relay,
    nats: sinks[1].relay,
    async start() {
      for (const sink of sinks) await sink.start();
    },
    async stop() {
      await Promise.all(sinks.map((sink) => sink.stop()));
    },
  };
}

/** The broker routes on their own Fastify (with the service's auth and errors), called in-process. */
async function routesApp(t: TestApp): Promise<FastifyInstance> {
  const app = Fastify({ ajv: { customOptions: { coerceTypes: false, allErrors: true, removeAdditional: false, useDefaults: false } } });
  registerErrorHandling(app);
  registerAuth(app, new ApiKeyCallers(t.globalKey, t.services.registry), t.services.registry);
  for (const sink of t.services.eventSinks) {
    if ((sink.kind === 'rabbitmq' || sink.kind === 'nats') && sink.routes) {
      await app.register(sink.routes, { setSink: (instance, kind, config) => t.services.instances.setSink(instance, kind, config), prefix: '/messenger' });
    }
  }
  await app.ready();
  return app;
}

async function setBroker(app: FastifyInstance, kind: 'rabbitmq' | 'nats', instance: string, key: string, body: unknown) {
  const response = await app.inject({ method: 'POST', url: `/messenger/${kind}/set/${instance}`, headers: { apikey: key }, payload: body as object });
  return { status: response.statusCode, body: response.json() as Record<string, unknown> };
}

/** Writes events straight through the service's EventWriter (each in its own transaction, like real emitters). */
async function emit(t: TestApp, instanceName: string, event: EventName, data: unknown): Promise<string> {
  const instance = t.services.registry.byInstanceName(instanceName);
  if (!instance) throw new Error(`no instance ${instanceName}`);
  return inUnit(
    t.services.store.db,
    async (unit) => t.services.events.emit(unit, { id: instance.id, name: instance.name, ownerJid: instance.ownerJid }, event, data).id,
  );
}

async function createInstance(t: TestApp, name: string): Promise<{ apikey: string }> {
  const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } });
  if (created.status !== 201) throw new Error(`create ${name}: ${created.status} ${JSON.stringify(created.body)}`);
  return { apikey: created.body.hash.apikey as string };
}

async function outboxHead(t: TestApp): Promise<number> {
  const row = await t.services.store.db
    .selectFrom('outbox')
    .select((eb) => eb.fn.max('seq').as('max'))
    .executeTakeFirst();
  return Number(row?.max ?? 0);
}

/** A TCP proxy in front of a broker: `cut()` drops every connection and refuses new ones, as a broker that went down. */
async function startProxy(port: number) {
  const sockets = new Set<Socket>();
  let down = false;
  const server: Server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = tcpConnect(port, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      down = true;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    restore() {
      down = false;
    },
    async close() {
      this.cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: received envelopes are inspected field by field
type Body = any;

interface AmqpReceived {
  exchange: string;
  routingKey: string;
  messageId: string | undefined;
  persistent: boolean;
  contentType: string | undefined;
  body: Body;
}

/** A consumer of its own, straight on the broker: a private queue bound to an exchange with `#`. */
class AmqpConsumer {
  readonly received: AmqpReceived[] = [];
  private constructor(private readonly model: ChannelModel) {}

  static async bind(exchanges: string[]): Promise<AmqpConsumer> {
    const model = await amqpConnect(AMQP_URI);
    const channel = await model.createChannel();
    const consumer = new AmqpConsumer(model);
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
    for (const exchange of exchanges) {
      await channel.assertExchange(exchange, 'topic', { durable: true, autoDelete: false });
      await channel.bindQueue(queue, exchange, '#');
    }
    await channel.consume(
      queue,
      (message: ConsumeMessage | null) => {
        if (!message) return;
        consumer.received.push({
          exchange: message.fields.exchange,
          routingKey: message.fields.routingKey,
          messageId: message.properties.messageId as string | undefined,
          persistent: message.properties.deliveryMode === 2,
          contentType: message.properties.contentType as string | undefined,
          body: JSON.parse(message.content.toString('utf8')),
        });
      },
      { noAck: true },
    );
    return consumer;
  }

  from(exchange: string): AmqpReceived[] {
    return this.received.filter((m) => m.exchange === exchange);
  }

  async close(): Promise<void> {
    await this.model.close().catch(() => undefined);
  }
}

/** Removes what a run left on RabbitMQ: exchanges and the Evolution-style queues the relay declared. */
async function cleanRabbit(exchanges: string[], instances: string[], prefix: string): Promise<void> {
  const model = await amqpConnect(AMQP_URI);
  try {
    const channel = await model.createChannel();
    for (const wire of Object.values(eventCatalog)) {
      for (const queue of [...instances.map((i) => `${i}.${wire}`), `${prefix}.${wire}`]) await channel.deleteQueue(queue);
    }
    for (const exchange of exchanges) await channel.deleteExchange(exchange);
  } finally {
    await model.close().catch(() => undefined);
  }
}

/** The order of first arrival of each event id, and whether every copy carries its envelope id as message id. */
function firstArrivals(messages: { messageId?: string; body: Body }[]): string[] {
  const seen = new Set<string>();
  const order: string[] = [];
  for (const m of messages) {
    expect(m.messageId).toBe(m.body.id);
    if (!seen.has(m.body.id)) {
      seen.add(m.body.id);
      order.push(m.body.id);
    }
  }
  return order;
}

const envelopeKeys = ['apikey', 'data', 'date_time', 'event', 'id', 'instance', 'sender', 'server_url'];

// ---------------------------------------------------------------------------------------------
// Pure parts

describe('broker helpers', () => {
  it("routes an instance event by what the instance's settings wanted when it was written, not by the settings now", () => {
    const live = new Map<string, SinkConfig>();
    const routerFor = (bit: number) =>
      new BrokerRouter({
        bit,
        liveSink: (id) => live.get(id),
        globalEnabled: false,
        globalFilter: {},
        address: (scope, instance, wire, eventId) => ({ target: scope === 'instance' ? instance : 'global', routingKey: wire, messageId: eventId }),
      });
    const rabbit = routerFor(brokerBit.rabbitmq);
    const nats = routerFor(brokerBit.nats);
    const row = (brokerWants: number | null): OutboxRow => ({
      seq: 1,
      id: 'e1',
      instanceId: 'i1',
      instanceName: 'gone',
      event: 'REMOVE_INSTANCE',
      body: '{}',
      brokerWants,
    });
    // Wanted on RabbitMQ when written; the instance and its settings are gone since (deleted, then a restart).
    expect(rabbit.route(row(brokerBit.rabbitmq)).map((p) => [p.scope, p.target, p.routingKey])).toEqual([['instance', 'gone', 'remove.instance']]);
    expect(nats.route(row(brokerBit.rabbitmq))).toEqual([]);
    expect(nats.route(row(brokerBit.rabbitmq | brokerBit.nats))).toHaveLength(1);
    // Not wanted when written: a setting enabled later does not reach back.
    live.set('i1', { enabled: true, events: [], options: {}, updatedAt: 0 });
    expect(rabbit.route(row(0))).toEqual([]);
    // Events from before their wants were stored follow the settings as they are.
    expect(rabbit.route(row(null))).toHaveLength(1);
  });

  it('global filter: all by default, only those switched on once any is on, GROUPS_UPDATE alias', () => {
    expect(globalWants({}, 'MESSAGES_UPSERT')).toBe(true);
    expect(globalWants({ MESSAGES_UPSERT: false }, 'MESSAGES_UPSERT')).toBe(false);
    expect(globalWants({ MESSAGES_UPSERT: false }, 'CALL')).toBe(true);
    expect(globalWants({ CALL: true }, 'MESSAGES_UPSERT')).toBe(false);
    expect(globalWants({ CALL: true }, 'CALL')).toBe(true);
    expect(globalWants({ GROUPS_UPDATE: true }, 'GROUP_UPDATE')).toBe(true);
  });

  it('connection addresses: credentials out of logs, heartbeat added, NATS credentials taken from the URL', () => {
    expect(safeAddress('amqp://user:secret@rabbit.example:5672/vh')).toBe('amqp://rabbit.example:5672');
    expect(safeAddress('nats://a:1@n1:4222, n2:4222')).toBe('nats://n1:4222,nats://n2:4222');
    expect(withHeartbeat('amqp://u:p@h:5672/v', 30)).toBe('amqp://u:p@h:5672/v?heartbeat=30');
    expect(withHeartbeat('amqp://h?heartbeat=5', 30)).toBe('amqp://h?heartbeat=5');
    expect(serversAndCredentials('nats://me:p%40ss@n1:4222,n2:4223')).toEqual({ servers: ['nats://n1:4222', 'nats://n2:4223'], user: 'me', pass: 'p@ss' });
    expect(serversAndCredentials('nats://tok@n1')).toEqual({ servers: ['nats://n1'], token: 'tok' });
  });

  it('NATS subject coverage', () => {
    expect(covers('a.>', 'a.messages.upsert')).toBe(true);
    expect(covers('a.>', 'a')).toBe(false);
    expect(covers('a.>', 'ab.call')).toBe(false);
    expect(covers('a.>', 'a.b.>')).toBe(true);
    expect(covers('messages.upsert', 'messages.upsert')).toBe(true);
    expect(covers('*.upsert', 'messages.upsert')).toBe(true);
    expect(covers('messages.upsert', 'messages.>')).toBe(false);
    expect(validSubject('a.b.messages.upsert')).toBe(true);
    expect(validSubject('a..call')).toBe(false);
    expect(validSubject('a.*')).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// RabbitMQ

for (const target of targets) {
  describe.skipIf(!target.available || !rabbitUp)(`RabbitMQ relay (${target.name})`, () => {
    let t: TestApp;
    let routes: FastifyInstance;
    beforeAll(async () => {
      t = await startApp(target);
      routes = await routesApp(t);
    });
    afterAll(async () => {
      await routes?.close();
      await t?.close();
    });

    it('instance events go to the exchange named after the instance, routing key = wire name; filters hold; global exchange gets all', async () => {
      const run = runId();
      const [a, b] = [`rba${run}`, `rbb${run}`];
      const config = brokerConfig(run, { rabbitmqEnabled: true, rabbitmqUri: AMQP_URI, rabbitmqGlobalEnabled: true });
      const global = config.rabbitmqExchangeName;
      const consumer = await AmqpConsumer.bind([a, b, global]);
      const relays = relaysFor(t, config);
      try {
        await relays.start();
        const linkedA = await linkedSandbox(t, a, phoneNumber());
        const linkedB = await linkedSandbox(t, b, phoneNumber());

        // Set and find, with the instance's own key.
        const setA = await setBroker(routes, 'rabbitmq', a, linkedA.apikey, { rabbitmq: { enabled: true, events: ['MESSAGES_UPSERT'] } });
        expect(setA.status).toBe(201);
        expect(setA.body).toEqual({ rabbitmq: { instanceName: a, rabbitmq: { enabled: true, events: ['MESSAGES_UPSERT'] } } });
        const setB = await setBroker(routes, 'rabbitmq', b, t.globalKey, { rabbitmq: { enabled: true, events: [] } });
        expect(setB.status).toBe(201);
        const found = await routes.inject({ method: 'GET', url: `/messenger/rabbitmq/find/${a}`, headers: { apikey: linkedA.apikey } });
        expect(found.json()).toEqual({ enabled: true, events: ['MESSAGES_UPSERT'] });
        const foreign = await routes.inject({ method: 'GET', url: `/messenger/rabbitmq/find/${b}`, headers: { apikey: linkedA.apikey } });
        expect(foreign.statusCode).toBe(403);
        const bad = await setBroker(routes, 'rabbitmq', a, t.globalKey, { rabbitmq: { enabled: true, events: ['NOPE'] } });
        expect(bad.status).toBe(400);

        // A real flow: A sends B a text (A: send.message, messages.update…; B: messages.upsert…).
        const sent = await t.api('POST', `message/sendText/${a}`, { body: { number: linkedB.owner.split('@')[0], text: 'hello broker' } });
        expect(sent.status).toBe(201);
        const upsertA = await emit(t, a, 'MESSAGES_UPSERT', { n: 1 });
        const contactA = await emit(t, a, 'CONTACTS_UPSERT', { n: 2 });

        await waitFor(() => consumer.from(b).some((m) => m.routingKey === 'messages.upsert' && JSON.stringify(m.body.data).includes('hello broker')), 10_000);
        await waitFor(() => consumer.from(global).some((m) => m.body.id === contactA), 10_000);
        await waitFor(() => consumer.from(a).some((m) => m.body.id === upsertA), 10_000);
        await sleep(300);

        // A's exchange: only the subscribed event.
        const onA = consumer.from(a);
        expect(onA.length).toBeGreaterThan(0);
        expect(onA.every((m) => m.routingKey === 'messages.upsert' && m.body.event === 'messages.upsert' && m.body.instance === a)).toBe(true);
        expect(onA.some((m) => m.body.id === contactA)).toBe(false);
        // B's exchange: every event, routing key = wire name.
        const onB = consumer.from(b);
        expect(onB.every((m) => m.routingKey === m.body.event && m.body.instance === b)).toBe(true);
        // Envelope: Evolution's fields plus id, no destination; message id = envelope id; persistent JSON.
        for (const m of [...onA, ...onB]) {
          expect(Object.keys(m.body).sort()).toEqual(envelopeKeys);
          expect(m.messageId).toBe(m.body.id);
          expect(m.persistent).toBe(true);
          expect(m.contentType).toBe('application/json');
          expect(m.body.apikey).toBeNull();
        }
        // Global exchange: events of both instances, unfiltered by the instance settings.
        const onGlobal = consumer.from(global);
        expect(onGlobal.some((m) => m.body.id === contactA && m.routingKey === 'contacts.upsert')).toBe(true);
        expect(
          onGlobal.some((m) => m.body.instance === b && m.routingKey === 'send.message') ||
            onGlobal.some((m) => m.body.instance === a && m.routingKey === 'send.message'),
        ).toBe(true);
        expect(onGlobal.every((m) => m.routingKey === m.body.event)).toBe(true);

        // Evolution's durable queues were declared and bound: `<instance>.<wire event>`.
        const probe = await amqpConnect(AMQP_URI);
        try {
          const channel = await probe.createChannel();
          const queue = await channel.checkQueue(`${a}.messages.upsert`);
          expect(queue.messageCount).toBeGreaterThanOrEqual(1);
        } finally {
          await probe.close();
        }

        // Disabled: nothing more on A's exchange (the global one still gets it).
        expect((await setBroker(routes, 'rabbitmq', a, t.globalKey, { rabbitmq: { enabled: false } })).body).toEqual({
          rabbitmq: { instanceName: a, rabbitmq: { enabled: false, events: [] } },
        });
        const afterDisable = await emit(t, a, 'MESSAGES_UPSERT', { n: 3 });
        await waitFor(() => consumer.from(global).some((m) => m.body.id === afterDisable), 10_000);
        await sleep(300);
        expect(consumer.from(a).some((m) => m.body.id === afterDisable)).toBe(false);
      } finally {
        await relays.stop();
        await consumer.close();
        await cleanRabbit([a, b, global], [a, b], config.rabbitmqPrefixKey);
      }
    });

    it("an exchange the broker refuses to take events on holds up no other instance's events", async () => {
      const run = runId();
      const [bad, good] = [`rbd${run}`, `rbg${run}`];
      const config = brokerConfig(run, { rabbitmqEnabled: true, rabbitmqUri: AMQP_URI });
      // Someone declared the bad instance's exchange with another type: the broker refuses every publication (406).
      const setup = await amqpConnect(AMQP_URI);
      await (await setup.createChannel()).assertExchange(bad, 'fanout', { durable: true });
      await setup.close();
      const consumer = await AmqpConsumer.bind([good]);
      const relays = relaysFor(t, config);
      try {
        await relays.start();
        const linkedBad = await linkedSandbox(t, bad, phoneNumber());
        const linkedGood = await linkedSandbox(t, good, phoneNumber());
        expect((await setBroker(routes, 'rabbitmq', bad, linkedBad.apikey, { rabbitmq: { enabled: true, events: [] } })).status).toBe(201);
        expect((await setBroker(routes, 'rabbitmq', good, linkedGood.apikey, { rabbitmq: { enabled: true, events: [] } })).status).toBe(201);
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) {
          await emit(t, bad, 'MESSAGES_UPSERT', { n: i });
          ids.push(await emit(t, good, 'MESSAGES_UPSERT', { n: i }));
        }
        // The refused events are dropped after a few quick tries; the healthy ones arrive meanwhile, a few times at most.
        await waitFor(() => ids.every((id) => consumer.from(good).some((m) => m.body.id === id)), 8_000);
        const late = await emit(t, good, 'MESSAGES_UPSERT', { n: 99 });
        await waitFor(() => consumer.from(good).some((m) => m.body.id === late), 5_000);
        for (const id of ids) expect(consumer.from(good).filter((m) => m.body.id === id).length).toBeLessThanOrEqual(3);
      } finally {
        await relays.stop();
        await consumer.close();
        await cleanRabbit([bad, good], [bad, good], config.rabbitmqPrefixKey);
      }
    });

    it('the connection drops mid-stream: the cursor holds, and after reconnect the backlog arrives complete and in order', async () => {
      const run = runId();
      const c = `rbc${run}`;
      const proxy = await startProxy(new URL(AMQP_URI).port ? Number(new URL(AMQP_URI).port) : 5672);
      const viaProxy = AMQP_URI.replace(/@[^/]+/, `@127.0.0.1:${proxy.port}`);
      const config = brokerConfig(run, { rabbitmqEnabled: true, rabbitmqUri: viaProxy, rabbitmqDeclareQueues: false });
      const consumer = await AmqpConsumer.bind([c]);
      const relays = relaysFor(t, config);
      try {
        await createInstance(t, c);
        expect((await setBroker(routes, 'rabbitmq', c, t.globalKey, { rabbitmq: { enabled: true, events: [] } })).status).toBe(201);
        await relays.start();
        const ids: string[] = [];
        for (let n = 1; n <= 40; n++) {
          ids.push(await emit(t, c, 'MESSAGES_UPSERT', { n }));
          await sleep(5);
        }
        await waitFor(() => consumer.received.length >= 10, 10_000);
        proxy.cut();
        for (let n = 41; n <= 120; n++) {
          ids.push(await emit(t, c, 'MESSAGES_UPSERT', { n }));
          if (n % 10 === 0) await sleep(20);
        }
        // While the broker is away the cursor stays put and the backlog waits in the outbox.
        await sleep(500);
        const held = await relays.rabbitmq!.position();
        await sleep(700);
        expect(await relays.rabbitmq!.position()).toBe(held);
        const during = new Set(consumer.received.map((m) => m.body.id)).size;
        expect(during).toBeLessThan(ids.length);
        proxy.restore();
        for (let n = 121; n <= 150; n++) ids.push(await emit(t, c, 'MESSAGES_UPSERT', { n }));
        // Only the numbered events count (the new instance's own connection events may be there too).
        const numbered = () => consumer.received.filter((m) => m.body.event === 'messages.upsert');
        await waitFor(() => new Set(numbered().map((m) => m.body.id)).size >= ids.length, 20_000);
        expect(firstArrivals(numbered())).toEqual(ids);
        expect(
          numbered()
            .map((m) => m.body.data.n)
            .filter((n, i, all) => all.indexOf(n) === i),
        ).toEqual(ids.map((_, i) => i + 1));
        // Every confirm came: the cursor reaches the newest event.
        const head = await outboxHead(t);
        await waitFor(async () => (await relays.rabbitmq!.position()) === head, 5000);
      } finally {
        await relays.stop();
        await proxy.close();
        await consumer.close();
        await cleanRabbit([c], [c], config.rabbitmqPrefixKey);
      }
    });

    it('a relay stopped with a backlog resumes from its stored cursor (no event skipped, none before the cursor sent again)', async () => {
      const run = runId();
      const d = `rbd${run}`;
      const config = brokerConfig(run, { rabbitmqEnabled: true, rabbitmqUri: AMQP_URI, rabbitmqDeclareQueues: false });
      const consumer = await AmqpConsumer.bind([d]);
      const relays = relaysFor(t, config);
      try {
        await createInstance(t, d);
        await setBroker(routes, 'rabbitmq', d, t.globalKey, { rabbitmq: { enabled: true, events: ['MESSAGES_UPSERT'] } });
        await relays.start();
        const ids = [await emit(t, d, 'MESSAGES_UPSERT', { n: 1 })];
        await waitFor(() => consumer.received.length === 1, 10_000);
        await relays.stop();
        for (let n = 2; n <= 30; n++) ids.push(await emit(t, d, 'MESSAGES_UPSERT', { n }));
        await sleep(300);
        expect(consumer.received.length).toBe(1);
        // The same relays start again (as after a service restart on this node).
        await relays.start();
        await waitFor(() => consumer.received.length >= 30, 10_000);
        await sleep(200);
        expect(consumer.received.map((m) => m.body.id)).toEqual(ids);
      } finally {
        await relays.stop();
        await consumer.close();
        await cleanRabbit([d], [d], config.rabbitmqPrefixKey);
      }
    });

    it.skipIf(target.name !== 'postgres')(
      'an event whose transaction commits late (lower seq) is not skipped: the relay holds back; a rolled-back seq is passed',
      async () => {
        const run = runId();
        const g = `rbg${run}`;
        const config = brokerConfig(run, { rabbitmqEnabled: true, rabbitmqUri: AMQP_URI, rabbitmqDeclareQueues: false });
        const consumer = await AmqpConsumer.bind([g]);
        const relays = relaysFor(t, config, { ...fast, relay: { ...fast.relay, feed: { gapSettleMs: 50, gapMaxWaitMs: 15_000 } } });
        const numbers = () => consumer.received.filter((m) => m.body.event === 'messages.upsert').map((m) => m.body.data.n as number);
        try {
          await createInstance(t, g);
          await setBroker(routes, 'rabbitmq', g, t.globalKey, { rabbitmq: { enabled: true, events: ['MESSAGES_UPSERT'] } });
          await relays.start();
          const instance = t.services.registry.byInstanceName(g)!;
          const source = { id: instance.id, name: instance.name, ownerJid: instance.ownerJid };
          /** A transaction that writes event n (taking its seq now) and commits or rolls back when told. */
          const slowUnit = (n: number) => {
            let finish!: (commit: boolean) => void;
            const decided = new Promise<boolean>((resolve) => (finish = resolve));
            let flushed!: () => void;
            const written = new Promise<void>((resolve) => (flushed = resolve));
            const done = inUnit(t.services.store.db, async (unit) => {
              t.services.events.emit(unit, source, 'MESSAGES_UPSERT', { n });
              await unit.flush();
              flushed();
              if (!(await decided)) throw new Error('rolled back on purpose');
            }).catch(() => undefined);
            return { written, finish, done };
          };

          const first = slowUnit(1);
          await first.written;
          await emit(t, g, 'MESSAGES_UPSERT', { n: 2 });
          await sleep(700);
          expect(numbers()).toEqual([]);
          first.finish(true);
          await first.done;
          await waitFor(() => numbers().length >= 2, 10_000);
          expect(numbers()).toEqual([1, 2]);

          const second = slowUnit(3);
          await second.written;
          await emit(t, g, 'MESSAGES_UPSERT', { n: 4 });
          await sleep(500);
          expect(numbers()).toEqual([1, 2]);
          second.finish(false);
          await second.done;
          await waitFor(() => numbers().length >= 3, 20_000);
          expect(numbers()).toEqual([1, 2, 4]);
        } finally {
          await relays.stop();
          await consumer.close();
          await cleanRabbit([g], [g], config.rabbitmqPrefixKey);
        }
      },
      40_000,
    );
  });
}

// ---------------------------------------------------------------------------------------------
// NATS

interface NatsReceived {
  subject: string;
  messageId: string | undefined;
  body: Body;
}

async function subscribe(nc: NatsConnection, subject: string): Promise<{ received: NatsReceived[]; sub: Subscription }> {
  const received: NatsReceived[] = [];
  const sub = nc.subscribe(subject, {
    callback: (error, message) => {
      if (error) return;
      received.push({ subject: message.subject, messageId: message.headers?.get('Nats-Msg-Id') || undefined, body: message.json() });
    },
  });
  await nc.flush();
  return { received, sub };
}

/** Every message the stream stored on subjects under `pattern`, in stream order. */
async function streamContents(jsm: JetStreamManager, stream: string, pattern: string): Promise<NatsReceived[]> {
  const info = await jsm.streams.info(stream);
  const out: NatsReceived[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const message = await jsm.streams.getMessage(stream, { seq }).catch(() => undefined);
    if (!message || !covers(pattern, message.subject)) continue;
    out.push({ subject: message.subject, messageId: message.header?.get('Nats-Msg-Id') || undefined, body: message.json() });
  }
  return out;
}

for (const target of targets) {
  describe.skipIf(!target.available || !natsUp)(`NATS relay (${target.name})`, () => {
    let t: TestApp;
    let routes: FastifyInstance;
    let nc: NatsConnection;
    let jsm: JetStreamManager;
    beforeAll(async () => {
      t = await startApp(target);
      routes = await routesApp(t);
      nc = await natsConnect({ servers: NATS_URL });
      jsm = await nc.jetstreamManager();
    });
    afterAll(async () => {
      await nc?.close();
      await routes?.close();
      await t?.close();
    });

    it('instance events go to <instance>.<wire event> through JetStream; filters hold; global subjects get all', async () => {
      const run = runId();
      const [a, b] = [`nta${run}`, `ntb${run}`];
      const config = brokerConfig(run, { natsEnabled: true, natsUrl: NATS_URL, natsGlobalEnabled: true });
      const prefix = config.natsPrefixKey;
      const subA = await subscribe(nc, `${a}.>`);
      const subB = await subscribe(nc, `${b}.>`);
      const subG = await subscribe(nc, `${prefix}.>`);
      const relays = relaysFor(t, config);
      try {
        await relays.start();
        const keyA = (await createInstance(t, a)).apikey;
        await createInstance(t, b);
        const setA = await setBroker(routes, 'nats', a, keyA, { nats: { enabled: true, events: ['MESSAGES_UPSERT', 'call'] } });
        expect(setA).toEqual({ status: 201, body: { nats: { instanceName: a, nats: { enabled: true, events: ['MESSAGES_UPSERT', 'CALL'] } } } });
        expect((await setBroker(routes, 'nats', b, t.globalKey, { nats: { enabled: true } })).status).toBe(201);
        const found = await routes.inject({ method: 'GET', url: `/messenger/nats/find/${b}`, headers: { apikey: t.globalKey } });
        expect(found.json()).toEqual({ enabled: true, events: [] });

        const ids = {
          upsertA: await emit(t, a, 'MESSAGES_UPSERT', { n: 1 }),
          presenceA: await emit(t, a, 'PRESENCE_UPDATE', { n: 2 }),
          callA: await emit(t, a, 'CALL', { n: 3 }),
          presenceB: await emit(t, b, 'PRESENCE_UPDATE', { n: 4 }),
          groupB: await emit(t, b, 'GROUP_PARTICIPANTS_UPDATE', { n: 5 }),
        };
        await waitFor(() => subG.received.filter((m) => m.body.id === ids.groupB).length === 1 && subA.received.length >= 2, 10_000);
        await sleep(300);

        expect(subA.received.map((m) => [m.subject, m.body.id])).toEqual([
          [`${a}.messages.upsert`, ids.upsertA],
          [`${a}.call`, ids.callA],
        ]);
        // B takes every event (its own connection/QR events too): ours among them, in order, each on its wire name.
        const ours = new Set(Object.values(ids));
        expect(subB.received.filter((m) => ours.has(m.body.id)).map((m) => [m.subject, m.body.id])).toEqual([
          [`${b}.presence.update`, ids.presenceB],
          [`${b}.group-participants.update`, ids.groupB],
        ]);
        expect(subB.received.every((m) => m.subject === `${b}.${m.body.event}`)).toBe(true);
        for (const m of [...subA.received, ...subB.received]) {
          expect(m.messageId).toBe(m.body.id);
          expect(Object.keys(m.body).sort()).toEqual(envelopeKeys);
        }
        expect(subG.received.filter((m) => ours.has(m.body.id)).map((m) => m.subject)).toEqual([
          `${prefix}.messages.upsert`,
          `${prefix}.presence.update`,
          `${prefix}.call`,
          `${prefix}.presence.update`,
          `${prefix}.group-participants.update`,
        ]);
        expect(subG.received.every((m) => m.messageId === `${m.body.id}:global`)).toBe(true);

        // Stored by JetStream, in the stream the relay created (subjects added per instance and prefix).
        const info = await jsm.streams.info(config.natsStream);
        expect(info.config.subjects.sort()).toEqual([`${a}.>`, `${b}.>`, `${prefix}.>`].sort());
        expect((await streamContents(jsm, config.natsStream, `${a}.>`)).map((m) => m.body.id)).toEqual([ids.upsertA, ids.callA]);

        // Deleting B removes its settings with it, yet its last events (written while they held) still go out.
        expect((await t.api('DELETE', `instance/delete/${b}`)).status).toBe(200);
        await waitFor(() => subB.received.some((m) => m.subject === `${b}.remove.instance`), 10_000);
        expect(subB.received.some((m) => m.subject === `${b}.instance.delete`)).toBe(true);
      } finally {
        await relays.stop();
        for (const s of [subA, subB, subG]) s.sub.unsubscribe();
        await jsm.streams.delete(config.natsStream).catch(() => undefined);
      }
    });

    it('the connection drops mid-stream: after reconnect the stream holds every event once, in order', async () => {
      const run = runId();
      const c = `ntc${run}`;
      const proxy = await startProxy(Number(new URL(NATS_URL).port || 4222));
      const config = brokerConfig(run, { natsEnabled: true, natsUrl: `nats://127.0.0.1:${proxy.port}` });
      const live = await subscribe(nc, `${c}.>`);
      const relays = relaysFor(t, config);
      try {
        await createInstance(t, c);
        await setBroker(routes, 'nats', c, t.globalKey, { nats: { enabled: true, events: [] } });
        await relays.start();
        const ids: string[] = [];
        for (let n = 1; n <= 40; n++) {
          ids.push(await emit(t, c, 'MESSAGES_UPSERT', { n }));
          await sleep(5);
        }
        await waitFor(() => live.received.length >= 10, 10_000);
        proxy.cut();
        for (let n = 41; n <= 120; n++) {
          ids.push(await emit(t, c, 'MESSAGES_UPSERT', { n }));
          if (n % 10 === 0) await sleep(20);
        }
        await sleep(500);
        const held = await relays.nats!.position();
        await sleep(700);
        expect(await relays.nats!.position()).toBe(held);
        proxy.restore();
        for (let n = 121; n <= 150; n++) ids.push(await emit(t, c, 'MESSAGES_UPSERT', { n }));
        const numbered = () => live.received.filter((m) => m.body.event === 'messages.upsert');
        await waitFor(() => new Set(numbered().map((m) => m.body.id)).size >= ids.length, 20_000);
        expect(firstArrivals(numbered())).toEqual(ids);
        // JetStream dropped the re-sent copies by their Nats-Msg-Id: exactly once, in order.
        const stored = await streamContents(jsm, config.natsStream, `${c}.messages.upsert`);
        expect(stored.map((m) => m.body.id)).toEqual(ids);
        expect(stored.every((m) => m.messageId === m.body.id && m.subject === `${c}.messages.upsert`)).toBe(true);
        const head = await outboxHead(t);
        await waitFor(async () => (await relays.nats!.position()) === head, 5000);
      } finally {
        await relays.stop();
        live.sub.unsubscribe();
        await proxy.close();
        await jsm.streams.delete(config.natsStream).catch(() => undefined);
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// A real broker restart: a private nats-server (JetStream on disk) stopped and started again mid-stream.

const natsBinary = existsSync(NATS_SERVER_BIN);
if (!natsBinary) console.warn(`\n*** ${NATS_SERVER_BIN} not found: the NATS server restart test is SKIPPED ***\n`);

class PrivateNats {
  private child: ChildProcess | undefined;
  constructor(
    readonly port: number,
    private readonly storeDir: string,
  ) {}

  async start(): Promise<void> {
    const child = spawn(NATS_SERVER_BIN, ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir], { stdio: 'ignore' });
    this.child = child;
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
      const nc = await natsConnect({ servers: `127.0.0.1:${this.port}`, maxReconnectAttempts: 0, timeout: 500 }).catch(() => undefined);
      if (!nc) return false;
      const ok = await nc
        .jetstreamManager()
        .then(() => true)
        .catch(() => false);
      await nc.close();
      return ok;
    }, 10_000);
  }

  /** Stops the server process this test started (by its own handle), waiting until it is gone. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(5000)]);
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  }
}

describe.skipIf(!natsBinary || !targets[0].available)('NATS relay across a real nats-server restart (sqlite)', () => {
  let t: TestApp;
  let routes: FastifyInstance;
  let server: PrivateNats;
  let storeDir: string;
  beforeAll(async () => {
    storeDir = mkdtempSync(join(tmpdir(), 'sb-nats-'));
    server = new PrivateNats(await freePort(), storeDir);
    await server.start();
    t = await startApp(targets[0]);
    routes = await routesApp(t);
  });
  afterAll(async () => {
    await routes?.close();
    await t?.close();
    await server?.stop();
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('events written while the server is down are published after it is back, once each and in order', async () => {
    const run = runId();
    const e = `nte${run}`;
    const url = `nats://127.0.0.1:${server.port}`;
    const config = brokerConfig(run, { natsEnabled: true, natsUrl: url });
    const relays = relaysFor(t, config);
    try {
      await createInstance(t, e);
      await setBroker(routes, 'nats', e, t.globalKey, { nats: { enabled: true, events: [] } });
      await relays.start();
      const ids: string[] = [];
      for (let n = 1; n <= 30; n++) {
        ids.push(await emit(t, e, 'MESSAGES_UPSERT', { n }));
        await sleep(5);
      }
      await waitFor(async () => (await relays.nats!.position()) !== undefined && (await streamCount(url, config.natsStream)) >= 10, 10_000);
      await server.stop();
      for (let n = 31; n <= 90; n++) ids.push(await emit(t, e, 'MESSAGES_UPSERT', { n }));
      await sleep(1000);
      await server.start();
      for (let n = 91; n <= 100; n++) ids.push(await emit(t, e, 'MESSAGES_UPSERT', { n }));
      await waitFor(async () => (await streamCount(url, config.natsStream, `${e}.messages.upsert`)) >= ids.length, 20_000);
      const nc = await natsConnect({ servers: url });
      try {
        const stored = await streamContents(await nc.jetstreamManager(), config.natsStream, `${e}.messages.upsert`);
        expect(stored.map((m) => m.body.id)).toEqual(ids);
      } finally {
        await nc.close();
      }
    } finally {
      await relays.stop();
    }
  });
});

async function streamCount(url: string, stream: string, subject?: string): Promise<number> {
  const nc = await natsConnect({ servers: url, maxReconnectAttempts: 0, timeout: 1000 }).catch(() => undefined);
  if (!nc) return 0;
  try {
    const info = await (await nc.jetstreamManager()).streams.info(stream, subject ? { subjects_filter: subject } : {});
    return subject ? (info.state.subjects?.[subject] ?? 0) : info.state.messages;
  } catch {
    return 0;
  } finally {
    await nc.close();
  }
}

// ---------------------------------------------------------------------------------------------
// A real broker restart: a private RabbitMQ node (own port, data and cookie) stopped and started again mid-stream.

const RABBIT_SERVER_BIN = process.env.TEST_RABBITMQ_SERVER_BIN ?? '/usr/lib/rabbitmq/bin/rabbitmq-server';
const rabbitBinary = existsSync(RABBIT_SERVER_BIN);
if (!rabbitBinary) console.warn(`\n*** ${RABBIT_SERVER_BIN} not found: the RabbitMQ server restart test is SKIPPED ***\n`);

class PrivateRabbit {
  private child: ChildProcess | undefined;
  constructor(
    readonly port: number,
    private readonly distPort: number,
    private readonly dir: string,
    private readonly node: string,
  ) {
    mkdirSync(join(dir, 'mnesia'), { recursive: true });
    mkdirSync(join(dir, 'log'), { recursive: true });
    writeFileSync(join(dir, 'rabbitmq.conf'), `listeners.tcp.1 = 127.0.0.1:${port}\n`);
    writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  }

  get uri(): string {
    return `amqp://guest:guest@127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(RABBIT_SERVER_BIN, [], {
      env: {
        ...process.env,
        HOME: this.dir,
        RABBITMQ_NODENAME: `${this.node}@localhost`,
        RABBITMQ_NODE_PORT: String(this.port),
        RABBITMQ_DIST_PORT: String(this.distPort),
        RABBITMQ_CONFIG_FILE: join(this.dir, 'rabbitmq.conf'),
        RABBITMQ_CONF_ENV_FILE: '/dev/null',
        RABBITMQ_MNESIA_BASE: join(this.dir, 'mnesia'),
        RABBITMQ_LOG_BASE: join(this.dir, 'log'),
        RABBITMQ_ENABLED_PLUGINS_FILE: join(this.dir, 'enabled_plugins'),
      },
      // Its own process group, so that stop() ends exactly the processes this test started.
      detached: true,
      stdio: 'ignore',
    });
    this.child = child;
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`rabbitmq-server exited with ${child.exitCode}`);
      const model = await amqpConnect(this.uri, { timeout: 1000 }).catch(() => undefined);
      if (!model) return false;
      await model.close().catch(() => undefined);
      return true;
    }, 60_000);
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child?.pid || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    process.kill(-child.pid, 'SIGTERM');
    await Promise.race([exited, sleep(20_000)]);
    if (child.exitCode === null) {
      process.kill(-child.pid, 'SIGKILL');
      await exited;
    }
    // The node's helpers (erl_child_setup, inet_gethost) leave with it; give the port a moment.
    await waitFor(async () => {
      const model = await amqpConnect(this.uri, { timeout: 500 }).catch(() => undefined);
      if (model) await model.close().catch(() => undefined);
      return !model;
    }, 10_000);
  }
}

describe.skipIf(!rabbitBinary || !targets[0].available)('RabbitMQ relay across a real RabbitMQ restart (sqlite)', () => {
  let t: TestApp;
  let routes: FastifyInstance;
  let broker: PrivateRabbit;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-rabbit-'));
    broker = new PrivateRabbit(await freePort(), await freePort(), dir, `sbtest${runId()}`);
    await broker.start();
    t = await startApp(targets[0]);
    routes = await routesApp(t);
  }, 90_000);
  afterAll(async () => {
    await routes?.close();
    await t?.close();
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('events written while the broker is down reach the durable queue after it is back, complete and in order', async () => {
    const run = runId();
    const f = `rbf${run}`;
    const config = brokerConfig(run, { rabbitmqEnabled: true, rabbitmqUri: broker.uri, rabbitmqDeclareQueues: true });
    const relays = relaysFor(t, config);
    try {
      await createInstance(t, f);
      await setBroker(routes, 'rabbitmq', f, t.globalKey, { rabbitmq: { enabled: true, events: ['MESSAGES_UPSERT'] } });
      await relays.start();
      const ids: string[] = [];
      for (let n = 1; n <= 30; n++) {
        ids.push(await emit(t, f, 'MESSAGES_UPSERT', { n }));
        await sleep(5);
      }
      const start = await outboxHead(t);
      await waitFor(async () => ((await relays.rabbitmq!.position()) ?? 0) > start - 20, 10_000);
      await broker.stop();
      for (let n = 31; n <= 90; n++) ids.push(await emit(t, f, 'MESSAGES_UPSERT', { n }));
      await sleep(1000);
      const held = await relays.rabbitmq!.position();
      expect(held).toBeLessThan(await outboxHead(t));
      await broker.start();
      for (let n = 91; n <= 100; n++) ids.push(await emit(t, f, 'MESSAGES_UPSERT', { n }));
      const head = await outboxHead(t);
      await waitFor(async () => (await relays.rabbitmq!.position()) === head, 30_000);

      // Evolution's durable queue kept everything across the restart (persistent messages, confirmed).
      const model = await amqpConnect(broker.uri);
      try {
        const channel = await model.createChannel();
        const got: { messageId?: string; body: Body }[] = [];
        for (;;) {
          const message = await channel.get(`${f}.messages.upsert`, { noAck: true });
          if (!message) break;
          got.push({ messageId: message.properties.messageId as string, body: JSON.parse(message.content.toString('utf8')) });
        }
        expect(firstArrivals(got)).toEqual(ids);
      } finally {
        await model.close();
      }
    } finally {
      await relays.stop();
    }
  }, 120_000);
});
