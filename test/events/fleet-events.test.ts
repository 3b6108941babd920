// Events in a fleet of nodes on one PostgreSQL schema: websocket clients of any node get every node's events (in
// order, once, even an event whose writer died right after its commit), a webhook is delivered once, and retention
// runs on one node at a time and is taken over when that node dies.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EventName } from '../../src/core/event-catalog.js';
import { inUnit, type RowSink } from '../../src/platform/store/unit.js';
import { linkedSandbox, startFleet, startReceiver, storeTargets, type TestApp } from '../support/harness.js';
import { sandboxParty } from '../support/sandbox-party.js';
import { uniqueName } from '../support/unique.js';
import { sleep, waitFor } from '../support/wait.js';
import { client, connected, type Client } from '../support/websocket-client.js';

const targets = await storeTargets();
const pg = targets.find((t) => t.name === 'postgres');

/** Heartbeats every 200 ms, dead after 3 s of silence (generous: the nodes share one event loop here). */
const fastNodes = { NODE_HEARTBEAT_INTERVAL_MS: '200', NODE_DEAD_AFTER_MS: '3000' };

/** Node 2 learns the instances and settings node 1 created (until the registry is synchronised across nodes). */
async function learn(node: TestApp): Promise<void> {
  await node.services.registry.load();
  await node.services.sinks.load();
}

/** Writes an event through the node's EventWriter; `dropAfterCommit`: its after-commit work never runs (the node died). */
async function emit(node: TestApp, instanceName: string, event: EventName, data: unknown, dropAfterCommit = false): Promise<string> {
  const instance = node.services.registry.byInstanceName(instanceName);
  if (!instance) throw new Error(`no instance ${instanceName}`);
  return inUnit(node.services.store.db, async (unit) => {
    const rows: RowSink = dropAfterCommit
      ? { insert: (table, row) => unit.insert(table, row), afterCommit: () => undefined, onRollback: (hook) => unit.onRollback(hook) }
      : unit;
    return node.services.events.emit(rows, { id: instance.id, name: instance.name, ownerJid: instance.ownerJid }, event, data).id;
  });
}

/** Stops the node's heartbeat without a clean stop: to the others it is dead once NODE_DEAD_AFTER_MS has passed. */
function silence(node: TestApp): void {
  vi.spyOn(node.services.nodes, 'tick').mockResolvedValue(undefined);
}

describe.skipIf(!pg?.available)('events in a fleet (postgres)', () => {
  const clients: Client[] = [];
  let closeFleet: (() => Promise<void>) | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const c of clients.splice(0)) c.socket.close();
    await closeFleet?.();
    closeFleet = undefined;
  });

  it('a websocket client of node 2 gets the events of an instance active on node 1, in order, once each; another key gets none of them', async () => {
    const fleet = await startFleet(2, { ...fastNodes, WEBSOCKET_ENABLED: 'true', WEBSOCKET_GLOBAL_EVENTS: 'true' });
    closeFleet = () => fleet.close();
    const [one, two] = fleet.nodes as [TestApp, TestApp];
    const alpha = uniqueName('ws-fleet-a');
    const beta = uniqueName('ws-fleet-b');
    const a = await linkedSandbox(one, alpha, '5511900000101');
    const b = await linkedSandbox(one, beta, '5511900000102');
    for (const [name, key] of [
      [alpha, a.apikey],
      [beta, b.apikey],
    ]) {
      const set = await one.api('POST', `websocket/set/${name}`, { body: { websocket: { enabled: true, events: ['MESSAGES_UPSERT', 'SEND_MESSAGE'] } }, key });
      expect(set.status, JSON.stringify(set.body)).toBe(201);
    }
    await learn(two);

    const ofAlpha = client(two.url, `/${alpha}`, { auth: { apikey: a.apikey } });
    const ofBeta = client(two.url, `/${beta}`, { auth: { apikey: b.apikey } });
    const global = client(two.url, '/', { auth: { apikey: two.globalKey } });
    clients.push(ofAlpha, ofBeta, global);
    await Promise.all([connected(ofAlpha), connected(ofBeta), connected(global)]);

    const texts = Array.from({ length: 5 }, (_, i) => `fleet message ${i + 1}`);
    for (const text of texts) {
      const sent = await one.api('POST', `message/sendText/${alpha}`, { body: { number: '5511900000102', text }, key: a.apikey });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    }
    const of = (c: Client, event: string, instance: string) => c.received.filter((p) => p.event === event && p.instance === instance);
    // Beta receives the messages (its messages.upsert); alpha's own client gets its send.message events.
    await waitFor(() => of(ofBeta, 'messages.upsert', beta).length >= texts.length, 10_000, {
      what: () => `node 2 client of beta: every upsert (got ${ofBeta.received.map((p) => p.event).join(', ')})`,
    });
    await waitFor(() => of(ofAlpha, 'send.message', alpha).length >= texts.length, 10_000, {
      what: () => `node 2 client of alpha: its sends (got ${ofAlpha.received.map((p) => p.event).join(', ')})`,
    });
    await sleep(700);

    const betaUpserts = of(ofBeta, 'messages.upsert', beta);
    expect(betaUpserts.map((p) => JSON.stringify(p.data).match(/fleet message \d/)?.[0])).toEqual(texts);
    expect(new Set(betaUpserts.map((p) => p.id)).size).toBe(betaUpserts.length);
    expect(of(ofAlpha, 'send.message', alpha)).toHaveLength(texts.length);
    // Each key's client gets its own instance's events only.
    expect(ofAlpha.received.every((p) => p.instance === alpha)).toBe(true);
    expect(ofBeta.received.every((p) => p.instance === beta)).toBe(true);
    // The global stream of node 2 has each of beta's events once too, in the same order.
    expect(of(global, 'messages.upsert', beta).map((p) => p.id)).toEqual(betaUpserts.map((p) => p.id));

    // An event whose writer died right after its commit (its after-commit work never ran) still reaches node 2's client.
    const orphan = await emit(one, beta, 'MESSAGES_UPSERT', { note: 'committed, then the writer died' }, true);
    await waitFor(() => ofBeta.received.some((p) => p.id === orphan), 5000, { what: 'the orphan event on node 2' });
    await sleep(700);
    expect(ofBeta.received.filter((p) => p.id === orphan)).toHaveLength(1);
    expect(ofAlpha.received.some((p) => p.id === orphan)).toBe(false);
  });

  it('a webhook event produced on node 1 is delivered once, by one node, while both nodes run', async () => {
    const fleet = await startFleet(2, { ...fastNodes, OUTBOUND_DENY_PRIVATE: 'false' });
    closeFleet = () => fleet.close();
    const [one, two] = fleet.nodes as [TestApp, TestApp];
    const rx = await startReceiver();
    try {
      const a = await sandboxParty(one, rx, 'hook-fleet-a');
      const b = await sandboxParty(one, rx, 'hook-fleet-b');
      await learn(two);
      for (let i = 1; i <= 5; i++) {
        const sent = await one.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: `hook ${i}` } });
        expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      }
      const upsertsOfB = () => rx.of('messages.upsert', b.name);
      await rx.waitFor(() => upsertsOfB().length >= 5, 10_000);
      await sleep(1000);
      const ids = upsertsOfB().map((e) => e.body.id);
      expect(ids).toHaveLength(5);
      expect(new Set(ids).size).toBe(5);
      const rows = await one.services.store.db
        .selectFrom('deliveries')
        .select(['state', 'attempts'])
        .where('instance_name', '=', b.name)
        .where('event', '=', 'MESSAGES_UPSERT')
        .execute();
      expect(rows).toHaveLength(5);
      for (const row of rows) expect(row).toMatchObject({ state: 'delivered', attempts: 1 });
    } finally {
      await rx.close();
    }
  });

  it('retention runs on the node holding its lease only; the other takes over when that node dies', async () => {
    const fleet = await startFleet(2, fastNodes);
    closeFleet = () => fleet.close();
    const [one, two] = fleet.nodes as [TestApp, TestApp];
    const name = uniqueName('retention-fleet');
    const created = await one.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } });
    expect(created.status).toBe(201);
    const db = one.services.store.db;
    const later = () => Date.now() + 30 * 24 * 3600_000;
    const holder = async () => (await db.selectFrom('job_leases').select('holder').where('job', '=', 'event-retention').executeTakeFirst())?.holder;
    const outboxOf = async () => (await db.selectFrom('outbox').select('id').where('instance_name', '=', name).execute()).length;

    await emit(one, name, 'MESSAGES_UPSERT', { n: 1 });
    const first = await one.services.retention.run(later());
    expect(first?.events).toBeGreaterThan(0);
    expect(await holder()).toBe(one.services.nodes.incarnation);

    // Node 2's run does nothing while node 1 holds the lease and lives.
    await emit(one, name, 'MESSAGES_UPSERT', { n: 2 });
    expect(await two.services.retention.run(later())).toBeUndefined();
    expect(await outboxOf()).toBe(1);

    // Node 1 dies (no heartbeat, no clean stop): once it counts as dead, node 2 runs and holds the lease.
    silence(one);
    const swept = await waitFor(async () => two.services.retention.run(later()), 10_000, { what: 'node 2 takes retention over' });
    // Not before node 1 counted as dead: its last heartbeat (a beat late under load, or one in flight when it was
    // silenced) older than the dead time.
    const lastBeat = await db.selectFrom('nodes').select('heartbeat_at').where('incarnation', '=', one.services.nodes.incarnation).executeTakeFirstOrThrow();
    expect(Date.now() - Number(lastBeat.heartbeat_at)).toBeGreaterThanOrEqual(3000);
    expect(swept.events).toBe(1);
    expect(await holder()).toBe(two.services.nodes.incarnation);
    // The dead node (whose own heartbeat is old) runs nothing any more.
    await learn(two);
    await emit(two, name, 'MESSAGES_UPSERT', { n: 3 });
    expect(await one.services.retention.run(later())).toBeUndefined();
    expect(await outboxOf()).toBe(1);

    // A clean stop hands the lease back at once.
    await two.services.retention.stop();
    expect(await holder()).toBeUndefined();
  });
});
