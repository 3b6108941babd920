// Sends accepted per second by a fleet of one, two and three nodes on one PostgreSQL database: a linked sandbox
// instance, and load from `hey` (a process of its own, Debian: `apt-get install hey`) spread evenly over the nodes
// (one hey per node, the workers divided among them), as fast as answered (closed loop).
//
//   npm run bench:fleet-throughput                         # 10 s per fleet size, 48 workers in all
//   npm run bench:fleet-throughput -- --duration=20 --workers=96
//
// Only 201 answers count as accepted; other answers are listed (before registry sync across nodes, a node that did
// not create the instance answers 404, and the figure for two and three nodes says so).
import { fmt, loadAverage, sleep } from './lib-bench.js';
import { addNode, api, createSandboxes, fleetBenchArgs, fleetBenchReady, runHey, startNode, withBenchFleet } from './fleet-lib.js';

const { duration: durationS, workers } = fleetBenchArgs({ duration: 10, workers: 48 }, '--duration=<s>, --workers=<n>');

async function main(): Promise<void> {
  await fleetBenchReady({ hey: true });
  const rows: string[] = [];
  for (const size of [1, 2, 3]) {
    await withBenchFleet('SIGTERM', async (fleet) => {
      for (let i = 0; i < size; i++) await addNode(fleet);
      await Promise.all(fleet.nodes.map((node) => startNode(node)));
      await createSandboxes(fleet.nodes[0], fleet.key, 'tput-', 2);
      const sender = 'tput-0';
      const created = await api(fleet.nodes[0], fleet.key, 'GET', 'instance/fetchInstances?instanceName=tput-1');
      const recipient = String(created.body?.[0]?.instance?.owner ?? '').split('@')[0] || '491700000001';
      const body = JSON.stringify({ number: recipient, text: 'fleet throughput' });
      const load = (seconds: number) =>
        Promise.all(
          fleet.nodes.map((node) =>
            runHey({
              url: `${node.base}/messenger/message/sendText/${sender}`,
              headers: { apikey: fleet.key },
              body,
              seconds,
              workers: Math.max(1, Math.round(workers / size)),
            }),
          ),
        );
      await load(2); // warm-up
      await sleep(1000);
      const before = loadAverage();
      const results = await load(durationS);
      const accepted = results.reduce((sum, result) => sum + (result.statuses['201'] ?? 0), 0);
      const other = results.flatMap((result, i) =>
        Object.entries(result.statuses)
          .filter(([status]) => status !== '201')
          .map(([status, n]) => `node ${i + 1}: ${n}× ${status}`),
      );
      const errors = results.reduce((sum, result) => sum + result.errors, 0);
      const p99 = Math.max(...results.map((result) => result.p99Ms));
      rows.push(
        `| ${size} | ${fmt(accepted / durationS, 0)} | ${fmt(p99, 1)} | ${other.length > 0 ? other.join(', ') : '–'}${errors > 0 ? `; ${errors} errors` : ''} | ${before} |`,
      );
      console.log(rows.at(-1));
    });
  }
  console.log(`\nSends accepted per second (hey, ${workers} workers in all spread over the nodes, ${durationS} s, closed loop)\n`);
  console.log('| nodes | sends accepted/s (201) | worst node p99 ms | other answers | load average before |');
  console.log('|---|---|---|---|---|');
  for (const row of rows) console.log(row);
}

await main();
