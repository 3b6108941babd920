// A fleet of real service processes on one PostgreSQL database, started as a user starts them (same settings, own
// ports): every node lists every other alive; a node killed with SIGKILL under webhook load has its in-flight delivery
// claims taken over by the survivors within seconds; a second process on a fleet node's port starts nothing.
import { describe, expect, it } from 'vitest';
import { postgresAvailable } from '../support/postgres.js';
import {
  callNode,
  eventsUnderTwoIds,
  fleetLeases,
  hookTo,
  incarnationOf,
  linkSandboxOn,
  sendLoad,
  startHoldingReceiver,
  startProcessFleet,
} from '../support/fleet-process.js';
import { startReceiver } from '../support/harness.js';
import { sleep, waitFor } from '../support/wait.js';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const available = await postgresAvailable('the multi-process fleet tests (test/fleet/processes.test.ts)');
const root = resolve(import.meta.dirname, '..', '..');

describe.skipIf(!available)('a fleet of three processes on one PostgreSQL database', () => {
  it('starts, and every node lists all three alive at GET /messenger/cluster', async () => {
    const fleet = await startProcessFleet(3);
    try {
      const incarnations = await Promise.all([0, 1, 2].map((i) => incarnationOf(fleet, i)));
      expect(new Set(incarnations).size).toBe(3);
      for (const i of [0, 1, 2]) {
        // A node's first heartbeats may predate the others' start: each sees all three within a few beats.
        const view = await waitFor(
          async () => {
            const body = await fleet.cluster(i);
            const alive = body.nodes.filter((node: { state: string }) => node.state === 'alive');
            return alive.length === 3 ? body : undefined;
          },
          10_000,
          { what: `node ${i + 1} listing three alive nodes` },
        );
        expect(view.self).toEqual({ incarnation: incarnations[i], nodeId: fleet.nodes[i].nodeId });
        expect(view.deadAfterMs).toBe(Number(fleetLeases.NODE_DEAD_AFTER_MS));
        expect(view.nodes.map((node: { incarnation: string }) => node.incarnation).sort()).toEqual([...incarnations].sort());
        expect(view.nodes.filter((node: { self: boolean }) => node.self).map((node: { nodeId: string }) => node.nodeId)).toEqual([fleet.nodes[i].nodeId]);
      }
    } finally {
      await fleet.close();
    }
  }, 180_000);

  it('after a kill -9 under webhook load, the survivors take over its in-flight delivery claims within seconds', async () => {
    const fleet = await startProcessFleet(3, { env: { WEBHOOK_REQUEST_TIMEOUT_MS: '30000' } });
    const receiver = await startHoldingReceiver();
    try {
      // Today an instance lives on the node it was created on: the load goes through node 1.
      const pairs = [];
      for (let k = 0; k < 4; k++) {
        const a = await linkSandboxOn(fleet, 0, `claims-a${k}`, `49160000031${k}0`);
        const b = await linkSandboxOn(fleet, 0, `claims-b${k}`, `49160000031${k}1`);
        await hookTo(fleet, 0, b.name, receiver, ['MESSAGES_UPSERT']);
        pairs.push({ from: a.name, to: b.number });
      }
      receiver.hold();
      const load = sendLoad(fleet, { pairs, perSecond: 20, durationMs: 4000, nodes: () => (fleet.isUp(0) ? [0] : []) });
      // Deliveries pile up behind the held ones; each lane's head is claimed by some node and in flight.
      await waitFor(() => receiver.heldCount() >= 2, 30_000, { what: () => `two held webhook requests (got ${receiver.heldCount()})` });
      await sleep(1000);

      const incarnations = await Promise.all([0, 1, 2].map((i) => incarnationOf(fleet, i)));
      const claims = await fleet.query<{ claimed_by: string; count: string }>(
        "select claimed_by, count(*) as count from deliveries where state = 'pending' and claimed_by is not null group by claimed_by",
      );
      const claimsOf = (incarnation: string) => Number(claims.find((row) => row.claimed_by === incarnation)?.count ?? 0);
      // The victim: the node holding the most claims in flight (a node holding none would prove nothing).
      const victim = [0, 1, 2].reduce((best, i) => (claimsOf(incarnations[i]) > claimsOf(incarnations[best]) ? i : best), 0);
      expect(claimsOf(incarnations[victim]), `claims in flight at the kill: ${JSON.stringify(claims)}`).toBeGreaterThan(0);

      await fleet.kill(victim, 'SIGKILL');
      const killedAt = Date.now();
      receiver.release();
      await load.done;

      // Every delivery in the store is delivered, the dead node's claims included, well before their one-minute lease.
      const settled = await waitFor(
        async () => {
          const rows = await fleet.query<{ state: string; count: string }>('select state, count(*) as count from deliveries group by state');
          const pending = rows.filter((row) => row.state !== 'delivered');
          return pending.length === 0 && rows.length > 0 ? Date.now() : undefined;
        },
        20_000,
        { what: () => `every delivery delivered after the kill of node ${victim + 1}:\n${fleet.logs()}` },
      );
      const takeoverMs = settled - killedAt;
      console.info(`node ${victim + 1} killed holding ${claimsOf(incarnations[victim])} claims; every delivery delivered ${takeoverMs} ms later`);
      expect(takeoverMs).toBeLessThan(Number(fleetLeases.NODE_DEAD_AFTER_MS) + 8000);

      const delivered = await fleet.query<{ event_id: string; claimed_by: string | null }>('select event_id, claimed_by from deliveries');
      const receivedIds = new Set(receiver.events.map((event) => String(event.body.id)));
      expect(delivered.filter((row) => !receivedIds.has(row.event_id)).map((row) => row.event_id)).toEqual([]);
      expect(eventsUnderTwoIds(receiver.events)).toEqual([]);
    } finally {
      await receiver.close();
      await fleet.close();
    }
  }, 240_000);

  it('a second process on the port of a running node exits non-zero naming the port, and starts nothing', async () => {
    const fleet = await startProcessFleet(1);
    const receiver = await startReceiver();
    try {
      const a = await linkSandboxOn(fleet, 0, 'port-a', '4916000003201');
      await hookTo(fleet, 0, a.name, receiver, ['CONNECTION_UPDATE']);
      await sleep(500);
      const before = receiver.events.length;
      const nodesBefore = await fleet.query<{ incarnation: string }>('select incarnation from nodes');

      const node = fleet.nodes[0];
      const second = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: root,
        env: { ...process.env, ...node.env, NODE_ID: 'fleet-node-intruder' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      second.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await Promise.race([
        new Promise<number | null>((done) => second.on('exit', (exitCode) => done(exitCode))),
        sleep(60_000).then(() => {
          second.kill('SIGKILL');
          return 'still running after 60 s' as const;
        }),
      ]);
      expect(code).not.toBe(0);
      expect(code).not.toBe('still running after 60 s');
      expect(stderr).toMatch(new RegExp(`SERVER_PORT: port ${node.port} is already in use`));

      // Nothing of it started: no node registered, no instance connected a second time, the running node unharmed.
      await sleep(1000);
      expect((await fleet.query<{ incarnation: string }>('select incarnation from nodes')).length).toBe(nodesBefore.length);
      expect(receiver.events.slice(before).map((event) => event.body?.data?.state)).toEqual([]);
      expect((await callNode(node.base, fleet.key, 'GET', `instance/connectionState/${a.name}`)).body.instance.state).toBe('open');
    } finally {
      await receiver.close();
      await fleet.close();
    }
  }, 180_000);
});
