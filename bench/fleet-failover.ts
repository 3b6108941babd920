// Fleet failover and handover time: three nodes on a fresh PostgreSQL database, N sandbox instances; the node owning
// the most is killed with SIGKILL (then, after it is back, the busiest node gets SIGTERM), and the time until every
// one of its instances is owned by another node (instance_owners) and answered `open` there is measured.
//
//   npm run bench:fleet-failover                       # 30 instances, waits at most 30 s for each takeover
//   npm run bench:fleet-failover -- --instances=100 --wait=60
//
// Meaningful once instance ownership is in (issue 20): before that no instance is ever taken over, and the
// benchmark says so ("not open on another node within …").
import { fmt, loadAverage, sleep } from './lib-bench.js';
import { addNode, api, createSandboxes, fleetBenchArgs, fleetBenchReady, owners, startNode, stopNode, withBenchFleet, type BenchFleet } from './fleet-lib.js';

const { instances, wait: waitS } = fleetBenchArgs({ instances: 30, wait: 30 }, '--instances=<n>, --wait=<seconds>');

/** The node owning the most instances now (by instance_owners; node 0 when nobody owns anything). */
async function busiest(fleet: BenchFleet, running: number[]): Promise<{ node: number; owned: string[] }> {
  const map = await owners(fleet);
  let best = { node: running[0], owned: [] as string[] };
  for (const i of running) {
    const owned = [...map].filter(([, owner]) => owner === i).map(([name]) => name);
    if (owned.length > best.owned.length) best = { node: i, owned };
  }
  return best;
}

/** Milliseconds until every instance in `names` is owned by one of `survivors` and `open` on it, or undefined. */
async function timeToReopen(fleet: BenchFleet, names: string[], survivors: number[], since: number): Promise<number | undefined> {
  const deadline = since + waitS * 1000;
  while (Date.now() < deadline) {
    const map = await owners(fleet).catch(() => new Map<string, number>());
    const moved = names.every((name) => survivors.includes(map.get(name) ?? -1));
    if (moved) {
      const states = await Promise.all(
        names.map(async (name) => {
          const owner = map.get(name) ?? survivors[0];
          const answer = await api(fleet.nodes[owner], fleet.key, 'GET', `instance/connectionState/${name}`, undefined, 5000).catch(() => undefined);
          return answer?.body?.instance?.state;
        }),
      );
      if (states.every((state) => state === 'open')) return Date.now() - since;
    }
    await sleep(100);
  }
  return undefined;
}

async function main(): Promise<void> {
  await fleetBenchReady({ hey: false });
  await withBenchFleet('SIGKILL', async (fleet) => {
    for (let i = 0; i < 3; i++) await addNode(fleet);
    await Promise.all(fleet.nodes.map((node) => startNode(node)));
    await createSandboxes(fleet.nodes[0], fleet.key, 'failover-', instances);
    await sleep(3000); // let ownership settle (spread) where it exists
    const rows: string[] = [];
    for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
      const running = [0, 1, 2];
      const victim = await busiest(fleet, running);
      // Without recorded owners, the instances live where they were created (node 1) and are measured all.
      const measured = victim.owned.length > 0 ? victim.owned : Array.from({ length: instances }, (_, i) => `failover-${i}`);
      const survivors = running.filter((i) => i !== victim.node);
      const load = loadAverage();
      const at = Date.now();
      const stopping = stopNode(fleet.nodes[victim.node], signal);
      if (signal === 'SIGKILL') await stopping;
      const took = await timeToReopen(fleet, measured, survivors, at);
      await stopping;
      const what =
        victim.owned.length > 0
          ? `${victim.owned.length} owned by node ${victim.node + 1}`
          : `${instances} (no owners recorded: those created through node ${victim.node + 1})`;
      rows.push(`| ${signal} | ${what} | ${took === undefined ? `not open on another node within ${waitS} s` : `${fmt(took / 1000, 2)} s`} | ${load} |`);
      console.log(rows.at(-1));
      await startNode(fleet.nodes[victim.node]);
      await sleep(3000);
    }
    console.log(`\nFleet failover (3 nodes, ${instances} sandbox instances, NODE_HEARTBEAT_INTERVAL_MS=500, NODE_DEAD_AFTER_MS=3000)\n`);
    console.log('| stop | instances of the stopped node | all open on the others after | load average |');
    console.log('|---|---|---|---|');
    for (const row of rows) console.log(row);
  });
}

await main();
