// Broker relays in a fleet (PostgreSQL): exactly one live node relays each broker; a clean stop hands over within
// about a heartbeat, a dead node (no heartbeat, no stop) after NODE_DEAD_AFTER_MS; no event is lost on the broker.
import { randomBytes } from 'node:crypto';
import { connect as amqpConnect } from 'amqplib';
import { connect as natsConnect } from 'nats';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EventName } from '../../../src/core/event-catalog.js';
import type { BrokerSink } from '../../../src/sinks/broker-relay/sink.js';
import { inUnit } from '../../../src/platform/store/unit.js';
import { startFleet, storeTargets, type TestApp } from '../../support/harness.js';
import { AMQP_URI, NATS_URL, natsAvailable, rabbitAvailable } from '../../support/brokers.js';
import { sleep, waitFor } from '../../support/wait.js';

const targets = await storeTargets();
const pg = targets.find((t) => t.name === 'postgres');
const rabbitUp = await rabbitAvailable('the RabbitMQ fleet relay tests');
const natsUp = await natsAvailable('the NATS fleet relay tests');

type Kind = 'rabbitmq' | 'nats';

/** Something consuming what the relay publishes for one instance: the envelope ids received, in order. */
interface Consumer {
  ids: string[];
  close(): Promise<void>;
}

async function rabbitConsumer(exchange: string): Promise<Consumer> {
  const model = await amqpConnect(AMQP_URI);
  const channel = await model.createChannel();
  const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
  await channel.assertExchange(exchange, 'topic', { durable: true, autoDelete: false });
  await channel.bindQueue(queue, exchange, '#');
  const ids: string[] = [];
  await channel.consume(queue, (message) => message && ids.push(JSON.parse(message.content.toString('utf8')).id), { noAck: true });
  return {
    ids,
    async close() {
      await channel.deleteExchange(exchange).catch(() => undefined);
      await model.close().catch(() => undefined);
    },
  };
}

async function natsConsumer(instance: string, stream: string): Promise<Consumer> {
  const nc = await natsConnect({ servers: NATS_URL });
  const ids: string[] = [];
  nc.subscribe(`${instance}.>`, { callback: (error, message) => !error && ids.push(message.json<{ id: string }>().id) });
  await nc.flush();
  return {
    ids,
    async close() {
      await (await nc.jetstreamManager()).streams.delete(stream).catch(() => undefined);
      await nc.close();
    },
  };
}

/** Writes one event through the node's EventWriter, in a transaction of its own. */
async function emit(node: TestApp, instanceName: string, n: number): Promise<string> {
  const instance = node.services.registry.byInstanceName(instanceName);
  if (!instance) throw new Error(`no instance ${instanceName} on ${node.services.config.nodeId}`);
  const event: EventName = 'MESSAGES_UPSERT';
  return inUnit(
    node.services.store.db,
    async (unit) => node.services.events.emit(unit, { id: instance.id, name: instance.name, ownerJid: instance.ownerJid }, event, { n }).id,
  );
}

const nodeIdOf = (node: TestApp) => node.services.config.nodeId;

function relayOf(node: TestApp, kind: Kind) {
  const sink = node.services.eventSinks.find((s) => s.kind === kind) as BrokerSink | undefined;
  if (!sink?.relay) throw new Error(`no ${kind} relay on ${node.services.config.nodeId}`);
  return sink.relay;
}

/** The node whose relay is active, once exactly one of `nodes` relays (`expected`, when given) and the lease names it. */
async function soleRelay(nodes: TestApp[], kind: Kind, timeoutMs: number, expected?: TestApp): Promise<TestApp> {
  return waitFor(
    async () => {
      const active = nodes.filter((node) => relayOf(node, kind).active);
      if (active.length !== 1 || (expected && active[0] !== expected)) return undefined;
      const holder = await relayOf(active[0], kind).holder();
      return holder === active[0].services.nodes.incarnation ? active[0] : undefined;
    },
    timeoutMs,
    {
      intervalMs: 10,
      what: () => `exactly one ${kind} relay (active: ${nodes.filter((node) => relayOf(node, kind).active).map((n) => n.services.config.nodeId)})`,
    },
  );
}

/** Waits until every id arrived; answers how many times each arrived. */
async function arrived(consumer: Consumer, ids: string[]): Promise<Map<string, number>> {
  await waitFor(() => ids.every((id) => consumer.ids.includes(id)), 15_000, {
    what: () => `all ${ids.length} events on the broker (missing ${ids.filter((id) => !consumer.ids.includes(id)).length})`,
  });
  await sleep(300);
  const counts = new Map<string, number>();
  for (const id of consumer.ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

const heartbeatMs = 200;
// Generous against a loaded machine: every node of the fleet shares one event loop here, and a node starting blocks it.
const deadAfterMs = 3000;

describe.each([
  { kind: 'rabbitmq' as const, up: rabbitUp },
  { kind: 'nats' as const, up: natsUp },
])('the $kind relay in a fleet (postgres)', ({ kind, up }) => {
  let cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    cleanup = [];
  });

  it.skipIf(!pg?.available || !up)(
    'runs on exactly one node; a clean stop hands over within about a heartbeat, a dead node after NODE_DEAD_AFTER_MS; no event lost',
    async () => {
      const run = randomBytes(4).toString('hex');
      const stream = `SBFLEET_${run}`;
      const env: Record<string, string> = {
        NODE_HEARTBEAT_INTERVAL_MS: String(heartbeatMs),
        NODE_DEAD_AFTER_MS: String(deadAfterMs),
        ...(kind === 'rabbitmq'
          ? { RABBITMQ_ENABLED: 'true', RABBITMQ_URI: AMQP_URI, RABBITMQ_DECLARE_QUEUES: 'false', RABBITMQ_EXCHANGE_NAME: `sbfleet_global_${run}` }
          : { NATS_ENABLED: 'true', NATS_URL, NATS_STREAM: stream, NATS_PREFIX_KEY: `sbfleet_${run}` }),
      };
      const fleet = await startFleet(2, env);
      cleanup.push(() => fleet.close());
      const nodes = [...fleet.nodes];
      const [one, two] = nodes as [TestApp, TestApp];
      const name = `fleetrelay${run}`;
      const created = await one.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const set = await one.api('POST', `${kind}/set/${name}`, { body: { [kind]: { enabled: true, events: ['MESSAGES_UPSERT'] } } });
      expect(set.status, JSON.stringify(set.body)).toBe(201);
      // Node 2 learns the instance and its settings (until the registry is synchronised across nodes).
      await two.services.registry.load();
      await two.services.sinks.load();
      const consumer = kind === 'rabbitmq' ? await rabbitConsumer(name) : await natsConsumer(name, stream);
      cleanup.push(() => consumer.close());

      // Two nodes: exactly one relays, events written on either node are published once each.
      const first = await soleRelay(nodes, kind, 5000);
      const before: string[] = [];
      for (let n = 1; n <= 10; n++) before.push(await emit(n % 2 ? one : two, name, n));
      let counts = await arrived(consumer, before);
      for (const id of before) expect(counts.get(id)).toBe(1);
      expect(nodes.filter((node) => relayOf(node, kind).active).map(nodeIdOf)).toEqual([nodeIdOf(first)]);

      // A clean stop hands the lease back: the other node relays within about a heartbeat (plus a poll at worst).
      const survivor = first === one ? two : one;
      await first.close();
      const stoppedAt = Date.now();
      await soleRelay([survivor], kind, 3000, survivor);
      const handedOverMs = Date.now() - stoppedAt;
      expect(handedOverMs).toBeLessThan(2000);
      const afterStop: string[] = [];
      for (let n = 11; n <= 20; n++) afterStop.push(await emit(survivor, name, n));
      counts = await arrived(consumer, [...before, ...afterStop]);
      for (const id of [...before, ...afterStop]) expect(counts.get(id)).toBe(1);

      // A third node joins; the survivor then dies (heartbeat stops, no clean stop): the third relays once the
      // survivor counts as dead. Events written meanwhile are all published (a batch in flight at the very moment
      // of takeover may be published twice: at most twice each).
      const third = await fleet.addNode(env);
      await third.services.registry.load();
      await third.services.sinks.load();
      await sleep(300);
      expect(relayOf(third, kind).active).toBe(false);
      vi.spyOn(survivor.services.nodes, 'tick').mockResolvedValue(undefined);
      const diedAt = Date.now();
      const duringFailover: string[] = [];
      for (let n = 21; n <= 30; n++) duringFailover.push(await emit(third, name, n));
      await soleRelay([survivor, third], kind, deadAfterMs + 5000, third);
      expect(Date.now() - diedAt).toBeGreaterThanOrEqual(deadAfterMs - heartbeatMs);
      const afterDeath: string[] = [];
      for (let n = 31; n <= 40; n++) afterDeath.push(await emit(third, name, n));
      counts = await arrived(consumer, [...before, ...afterStop, ...duringFailover, ...afterDeath]);
      for (const id of duringFailover) expect(counts.get(id)).toBeLessThanOrEqual(2);
      for (const id of [...before, ...afterStop, ...afterDeath]) expect(counts.get(id)).toBe(1);
      // The dead node relays nothing any more.
      expect(relayOf(survivor, kind).active).toBe(false);
    },
    60_000,
  );
});
