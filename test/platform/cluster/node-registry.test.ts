// This node in the store: registered with a fresh incarnation, heartbeating while it runs; a clean stop marks it
// stopped and gives its webhook claims back at once (due now), so nothing waits for a lease to run out.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startApp, startFleet, startReceiver, storeTargets, type TestApp } from '../../support/harness.js';
import { sandboxParty } from '../../support/sandbox-party.js';
import { waitFor } from '../../support/wait.js';

const targets = await storeTargets();

/** A receiver that takes requests and never answers them (the delivery stays claimed while it waits). */
async function hangingReceiver() {
  let requests = 0;
  const server: Server = createServer((req) => {
    req.resume();
    req.on('end', () => requests++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each(targets)('the node registry on $name', (target) => {
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  it.skipIf(!target.available)('registers this node, beats, and at a clean stop is marked stopped with its claims given back', async () => {
    const t = await startApp(target, { NODE_HEARTBEAT_INTERVAL_MS: '100', WEBHOOK_REQUEST_TIMEOUT_MS: '30000', OUTBOUND_DENY_PRIVATE: 'false' });
    apps.push(t);
    const db = t.services.store.db;
    const incarnation = t.services.nodes.incarnation;
    const row = () => db.selectFrom('nodes').selectAll().where('incarnation', '=', incarnation).executeTakeFirstOrThrow();
    const first = await row();
    expect(first.node_id).toBe(t.services.config.nodeId);
    expect(first.stopped_at).toBeNull();
    await waitFor(async () => Number((await row()).heartbeat_at) > Number(first.heartbeat_at), 5000);

    const rx = await startReceiver();
    const hanging = await hangingReceiver();
    try {
      const a = await sandboxParty(t, rx, 'node-a');
      const b = await sandboxParty(t, rx, 'node-b');
      const hook = await t.api('POST', `webhook/set/${b.name}`, { body: { webhook: { enabled: true, url: hanging.url, events: ['MESSAGES_UPSERT'] } } });
      expect(hook.status, JSON.stringify(hook.body)).toBe(201);
      const sent = await t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: 'held at the stop' } });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      await waitFor(() => hanging.requests() === 1, 10_000);
      const claimed = () =>
        db.selectFrom('deliveries').selectAll().where('instance_name', '=', b.name).where('event', '=', 'MESSAGES_UPSERT').executeTakeFirstOrThrow();
      expect((await claimed()).claimed_by).toBe(incarnation);

      await t.services.stop();
      const stoppedAt = Date.now();
      expect((await row()).stopped_at).not.toBeNull();
      const released = await claimed();
      expect(released.state).toBe('pending');
      expect(released.claimed_by).toBeNull();
      expect(Number(released.next_attempt_at)).toBeLessThanOrEqual(stoppedAt);
    } finally {
      await hanging.close();
      await rx.close();
    }
  });

  it.skipIf(!target.available)('forgets incarnations gone for a day at start, then at most hourly, not at every beat', async () => {
    const day = 24 * 3600_000;
    const now = Date.now();
    const gone = (incarnation: string) => ({
      incarnation,
      node_id: 'gone-node',
      started_at: now - 3 * day,
      heartbeat_at: now - 2 * day,
      stopped_at: now - 2 * day,
    });
    // An incarnation gone two days before this node starts.
    const withGoneNode = {
      ...target,
      async open() {
        const opened = await target.open();
        await opened.store.db.insertInto('nodes').values(gone('gone-before-start')).execute();
        return opened;
      },
    };
    const t = await startApp(withGoneNode, { NODE_HEARTBEAT_INTERVAL_MS: '60000' });
    apps.push(t);
    const db = t.services.store.db;
    const kept = async () => (await db.selectFrom('nodes').select('incarnation').where('node_id', '=', 'gone-node').execute()).map((row) => row.incarnation);
    expect(await kept()).toEqual([]);

    // Gone as long, found after the start: kept through the beats of the next hour, forgotten at the first one after.
    await db.insertInto('nodes').values(gone('gone-after-start')).execute();
    await t.services.nodes.tick(now);
    await t.services.nodes.tick(now + 55 * 60_000);
    expect(await kept()).toEqual(['gone-after-start']);
    await t.services.nodes.tick(now + 61 * 60_000);
    expect(await kept()).toEqual([]);
  });

  it.skipIf(!target.available)('lists the nodes sharing the store at GET /cluster, to the global key only', async () => {
    const t = await startApp(target, { NODE_ID: 'cluster-view', NODE_DEAD_AFTER_MS: '5000' });
    apps.push(t);
    const db = t.services.store.db;
    // An earlier life of another node that stopped beating a minute ago, and one that stopped cleanly.
    const now = Date.now();
    await db
      .insertInto('nodes')
      .values([
        { incarnation: 'gone-silent', node_id: 'other-node', started_at: now - 120_000, heartbeat_at: now - 60_000, stopped_at: null },
        { incarnation: 'gone-cleanly', node_id: 'third-node', started_at: now - 90_000, heartbeat_at: now - 30_000, stopped_at: now - 30_000 },
      ])
      .execute();

    const res = await t.api('GET', 'cluster');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.self).toEqual({ incarnation: t.services.nodes.incarnation, nodeId: 'cluster-view' });
    expect(res.body.deadAfterMs).toBe(5000);
    const byIncarnation = new Map(res.body.nodes.map((node: { incarnation: string }) => [node.incarnation, node]));
    expect(byIncarnation.get(t.services.nodes.incarnation)).toMatchObject({
      nodeId: 'cluster-view',
      address: t.url,
      state: 'alive',
      self: true,
      stoppedAt: null,
    });
    expect(byIncarnation.get('gone-silent')).toMatchObject({ nodeId: 'other-node', address: null, state: 'dead', self: false, stoppedAt: null });
    expect(byIncarnation.get('gone-cleanly')).toMatchObject({ nodeId: 'third-node', state: 'stopped', self: false });
    expect(new Date(res.body.nodes[0].startedAt).getTime()).toBeGreaterThanOrEqual(new Date(res.body.nodes[1].startedAt).getTime());

    const created = await t.api('POST', 'instance/create', { body: { instanceName: 'cluster-inst', integration: 'SANDBOX' } });
    expect(created.status).toBe(201);
    const byInstanceKey = await t.api('GET', 'cluster', { key: created.body.hash.apikey });
    expect(byInstanceKey.status).toBe(403);
    expect((await t.api('GET', 'cluster', { key: null })).status).toBe(401);
  });
});

describe('nodes of one fleet', () => {
  const pg = targets.find((t) => t.name === 'postgres');
  it.skipIf(!pg?.available)('two nodes on one PostgreSQL schema each list both as alive, with their addresses', async () => {
    const fleet = await startFleet(2, { NODE_HEARTBEAT_INTERVAL_MS: '200' });
    try {
      const [one, two] = fleet.nodes as [TestApp, TestApp];
      for (const node of [one, two]) {
        const res = await node.api('GET', 'cluster');
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const alive = res.body.nodes.filter((n: { state: string }) => n.state === 'alive');
        expect(alive.map((n: { nodeId: string }) => n.nodeId).sort()).toEqual(['node-1', 'node-2']);
      }
      const rows = await one.services.store.db.selectFrom('nodes').select(['node_id', 'address']).orderBy('node_id').execute();
      expect(rows).toEqual([
        { node_id: 'node-1', address: one.url },
        { node_id: 'node-2', address: two.url },
      ]);
    } finally {
      await fleet.close();
    }
  });
});
