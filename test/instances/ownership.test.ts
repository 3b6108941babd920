// Instance ownership: each instance is live on exactly one node of a fleet (fair shares, handover at a clean stop,
// takeover of a dead node), and a node that lost an instance cannot write for it (the fencing generation).
import { afterAll, describe, expect, it } from 'vitest';
import { InstanceFencedError } from '../../src/platform/cluster/ownership-fence.js';
import { startApp, startFleet, storeTargets, type TestApp } from '../support/harness.js';
import { uniqueName, uniqueNumber } from '../support/unique.js';
import { waitFor } from '../support/wait.js';

const targets = await storeTargets();
const pg = targets.find((t) => t.name === 'postgres');

/** Small fleet timings: a beat every 200 ms, dead after 1.5 s. */
const fleetEnv = { NODE_HEARTBEAT_INTERVAL_MS: '200', NODE_DEAD_AFTER_MS: '1500' };

/** A SANDBOX instance created and linked through `t` (its QR code scanned): it has a session, and is open. */
async function linkedSandbox(t: TestApp, prefix: string): Promise<{ id: string; name: string }> {
  const name = uniqueName(prefix);
  const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX', qrcode: true } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const scan = await t.api('POST', 'sandbox/scan', { body: { code: created.body.qrcode.code, number: uniqueNumber('4916') } });
  expect(scan.status, JSON.stringify([scan.body, created.body])).toBe(200);
  return { id: created.body.instance.instanceId, name };
}

/** The owner rows as the store has them, by instance id. */
async function ownerRows(t: TestApp): Promise<Map<string, { owner: string | null; generation: number }>> {
  const rows = await t.services.store.db.selectFrom('instance_owners').selectAll().execute();
  return new Map(rows.map((row) => [row.instance_id, { owner: row.owner, generation: Number(row.generation) }]));
}

/** The nodes on which the instance has a connector that is not closed (read synchronously: all nodes are in this process). */
function liveOn(nodes: readonly TestApp[], instanceId: string): TestApp[] {
  return nodes.filter((node) => {
    const state = node.services.lifecycle.connectorOf(instanceId)?.state();
    return state !== undefined && state !== 'close';
  });
}

/** How many of `ids` each node owns, by the store. */
async function shares(nodes: readonly TestApp[], ids: readonly string[]): Promise<number[]> {
  const rows = await ownerRows(nodes[0]);
  return nodes.map((node) => ids.filter((id) => rows.get(id)?.owner === node.services.nodes.incarnation).length);
}

/** Every instance open on exactly one of `nodes`, the one its owner row names. */
async function openOnOwnerOnly(nodes: readonly TestApp[], ids: readonly string[]): Promise<boolean> {
  const rows = await ownerRows(nodes[0]);
  return ids.every((id) => {
    const live = liveOn(nodes, id);
    return live.length === 1 && live[0].services.lifecycle.connectorOf(id)?.state() === 'open' && rows.get(id)?.owner === live[0].services.nodes.incarnation;
  });
}

describe.each(targets)('instance ownership on one node ($name)', (target) => {
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  it.skipIf(!target.available)('owns every instance it creates, connects them, counts them, and forgets a deleted one', async () => {
    const t = await startApp(target, { METRICS_ENABLED: 'true' });
    apps.push(t);
    const a = await linkedSandbox(t, 'own-a');
    const b = await linkedSandbox(t, 'own-b');
    const me = t.services.nodes.incarnation;
    const rows = await ownerRows(t);
    expect(rows.get(a.id)?.owner).toBe(me);
    expect(rows.get(b.id)?.owner).toBe(me);
    expect(t.services.lifecycle.ownsLocally(a.id)).toBe(true);
    expect(t.services.lifecycle.connectorOf(a.id)?.state()).toBe('open');
    const state = await t.api('GET', `instance/connectionState/${a.name}`);
    expect(state.body.instance.state).toBe('open');

    const cluster = await t.api('GET', 'cluster');
    expect(cluster.body.nodes.find((n: { self: boolean }) => n.self).instances).toBe(2);
    const metrics = await t.api('GET', '/metrics', { key: null });
    expect(String(metrics.body)).toMatch(/^switchboard_instances_owned 2$/m);

    const removed = await t.api('DELETE', `instance/delete/${b.name}`);
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
    expect((await ownerRows(t)).has(b.id)).toBe(false);
    expect(t.services.lifecycle.ownedCount()).toBe(1);
  });
});

describe('instance ownership in a fleet', () => {
  it.skipIf(!pg?.available)('spreads instances to fair shares, never live on two nodes at once, each open on its owner', async () => {
    const fleet = await startFleet(1, fleetEnv);
    try {
      const one = fleet.nodes[0];
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await linkedSandbox(one, 'spread')).id);
      expect(await shares([one], ids)).toEqual([6]);

      // Node 2 starts after the instances exist, so its registry knows them (registry sync between nodes comes apart).
      const two = await fleet.addNode();
      const nodes = [one, two];
      let samples = 0;
      await waitFor(
        async () => {
          // At every sample, no instance is live on two nodes (read in one synchronous pass over both nodes).
          for (const id of ids) expect(liveOn(nodes, id).length, `instance ${id} live on two nodes`).toBeLessThanOrEqual(1);
          // A connector live before and after reading the rows runs on the node the row names.
          const before = ids.map((id) => liveOn(nodes, id)[0]);
          const rows = await ownerRows(one);
          ids.forEach((id, i) => {
            const node = before[i];
            if (node && liveOn(nodes, id)[0] === node) expect(rows.get(id)?.owner).toBe(node.services.nodes.incarnation);
          });
          samples++;
          const [a, b] = await shares(nodes, ids);
          return a === 3 && b === 3 && (await openOnOwnerOnly(nodes, ids));
        },
        10_000,
        { intervalMs: 10, what: 'six instances spread 3/3, each open on its owner' },
      );
      expect(samples).toBeGreaterThan(1);
      expect(one.services.lifecycle.ownedCount()).toBe(3);
      expect(two.services.lifecycle.ownedCount()).toBe(3);
      // A node refuses to build a connector for an instance it does not own.
      const foreign = ids.find((id) => !one.services.lifecycle.ownsLocally(id)) as string;
      const instance = one.services.registry.byInstanceId(foreign);
      expect(instance).toBeDefined();
      expect(() => one.services.lifecycle.attach(instance!)).toThrow(/live on another node/);
      const cluster = await two.api('GET', 'cluster');
      const alive = cluster.body.nodes.filter((n: { state: string }) => n.state === 'alive');
      expect(alive.map((n: { instances: number }) => n.instances)).toEqual([3, 3]);
    } finally {
      await fleet.close();
    }
  });

  it.skipIf(!pg?.available)('hands every instance of a node stopped cleanly to the other, open there within 5 s', async () => {
    const fleet = await startFleet(1, fleetEnv);
    try {
      const one = fleet.nodes[0];
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push((await linkedSandbox(one, 'handover')).id);
      const two = await fleet.addNode();
      await waitFor(async () => (await shares([one, two], ids)).join() === '2,2' && (await openOnOwnerOnly([one, two], ids)), 10_000, {
        what: 'instances spread 2/2',
      });

      await one.close();
      const stoppedAt = Date.now();
      await waitFor(async () => (await shares([two], ids))[0] === 4 && (await openOnOwnerOnly([two], ids)), 5000, {
        what: 'all four owned and open on node 2',
      });
      expect(Date.now() - stoppedAt).toBeLessThan(5000);
      expect(one.services.lifecycle.ownedCount()).toBe(0);
    } finally {
      await fleet.close();
    }
  });

  it.skipIf(!pg?.available)('a node that stops beating stops its instances itself, and the other takes them after the dead time', async () => {
    const fleet = await startFleet(1, fleetEnv);
    try {
      const one = fleet.nodes[0];
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push((await linkedSandbox(one, 'silent')).id);
      const two = await fleet.addNode();
      await waitFor(async () => (await shares([one, two], ids)).join() === '2,2' && (await openOnOwnerOnly([one, two], ids)), 10_000, {
        what: 'instances spread 2/2',
      });
      const ofOne = ids.filter((id) => one.services.lifecycle.ownsLocally(id));

      // Node 1's heartbeat stops (its process hangs on the store, say): it stops what it owns before the others may
      // take it, and node 2 takes it once node 1 is dead.
      one.services.nodes.tick = async () => undefined;
      const silentAt = Date.now();
      await waitFor(() => ofOne.every((id) => one.services.lifecycle.connectorOf(id) === undefined), 3000, { what: 'node 1 fenced itself' });
      const fencedAfter = Date.now() - silentAt;
      expect((await shares([two], ofOne))[0]).toBe(0);
      await waitFor(async () => (await shares([two], ids))[0] === 4 && (await openOnOwnerOnly([two], ids)), 6000, { what: 'node 2 took over' });
      expect(Date.now() - silentAt).toBeGreaterThanOrEqual(1500 - 200 - fencedAfter);
      expect(one.services.lifecycle.ownedCount()).toBe(0);
    } finally {
      await fleet.close();
    }
  });

  it.skipIf(!pg?.available)('refuses a late write of a node that lost its lease without noticing: the generation decides', async () => {
    const fleet = await startFleet(1, fleetEnv);
    try {
      const one = fleet.nodes[0];
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) ids.push((await linkedSandbox(one, 'stale')).id);
      const two = await fleet.addNode();
      await waitFor(async () => (await shares([one, two], ids)).join() === '1,1' && (await openOnOwnerOnly([one, two], ids)), 10_000, {
        what: 'instances spread 1/1',
      });
      const [lost] = ids.filter((id) => one.services.lifecycle.ownsLocally(id));
      const db = one.services.store.db;
      const sessionBefore = await db.selectFrom('sessions').selectAll().where('instance_id', '=', lost).executeTakeFirstOrThrow();

      // Node 1 stops beating but believes its heartbeat is fine (a paused process, a clock gone wrong): it keeps its
      // connector, so only the fence in the store can stop its writes once node 2 owns the instance.
      one.services.nodes.tick = async () => undefined;
      Object.defineProperty(one.services.nodes, 'lastBeatAt', { get: () => Date.now(), set: () => undefined, configurable: true });
      await waitFor(async () => (await ownerRows(two)).get(lost)?.owner === two.services.nodes.incarnation, 6000, { what: 'node 2 took over' });
      await waitFor(() => two.services.lifecycle.connectorOf(lost)?.state() === 'open', 5000, { what: 'open on node 2' });
      expect(one.services.lifecycle.ownsLocally(lost)).toBe(true);
      const ownerRow = (await ownerRows(two)).get(lost);

      const late = one.services.connectorHost.saveSession(lost, { stale: true });
      await expect(late).rejects.toBeInstanceOf(InstanceFencedError);
      const sessionAfter = await db.selectFrom('sessions').selectAll().where('instance_id', '=', lost).executeTakeFirstOrThrow();
      expect(sessionAfter.data).toBe(sessionBefore.data);
      // Refused once, node 1 stops the instance at once and writes nothing more for it.
      expect(one.services.lifecycle.ownsLocally(lost)).toBe(false);
      expect(one.services.lifecycle.connectorOf(lost)).toBeUndefined();
      await expect(one.services.connectorHost.connectionChanged(lost, { state: 'close', reason: 'stale' })).rejects.toBeInstanceOf(InstanceFencedError);
      const instanceRow = await db.selectFrom('instances').select(['status']).where('id', '=', lost).executeTakeFirstOrThrow();
      expect(instanceRow.status).toBe('open');
      expect((await ownerRows(two)).get(lost)).toEqual(ownerRow);
    } finally {
      await fleet.close();
    }
  });
});
