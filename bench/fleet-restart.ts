// A node restarted with many sandbox instances (10,000 by default) on PostgreSQL: the time from its start until every
// instance is `open`, against an empty node's start time (until GET /health answers) on the same machine in the
// same run. The target: at most twice. Each is the median of `--runs` starts (3 by default): one start varies
// by a few hundred milliseconds. Also the node's resident memory empty and with every instance open (a rough memory
// cost per open sandbox instance, for sizing a fleet), and how long the stop before each restart took (a SIGTERM hands
// every instance over). Nodes run the compiled service, as `npm start` does.
//
//   npm run bench:fleet-restart                          # 10,000 instances
//   npm run bench:fleet-restart -- --instances=2000 --kill   # SIGKILL instead of SIGTERM before each restart
import { fmt, loadAverage, sleep } from './lib-bench.js';
import { addNode, fleetBenchArgs, fleetBenchReady, rssMb, seedSandboxes, startNode, stopNode, waitAllOpen, withBenchFleet } from './fleet-lib.js';

const { instances, kill, runs } = fleetBenchArgs({ instances: 10_000, kill: false, runs: 3 }, '--instances=<n>, --kill, --runs=<n>');

const target = 2;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function main(): Promise<void> {
  await fleetBenchReady({ hey: false });
  await withBenchFleet('SIGKILL', async (fleet) => {
    const node = await addNode(fleet);
    // The empty node: its first start on the empty database also migrates it (not counted); then `runs` starts.
    const firstEmptyMs = await startNode(node);
    const emptyStarts: number[] = [];
    for (let run = 0; run < runs; run++) {
      await stopNode(node, 'SIGTERM');
      emptyStarts.push(await startNode(node));
    }
    await sleep(2000);
    const emptyRss = rssMb(node.child?.proc.pid);
    const emptyMs = median(emptyStarts);
    console.log(`empty node: first start ${firstEmptyMs} ms (migrations), starts ${emptyStarts.join(', ')} ms, ${fmt(emptyRss, 0)} MB resident`);

    // One created through the API, the others copies of it in SQL (fresh ids, names, keys, numbers); the node's first
    // start with them opens them all (not counted), then its memory is read.
    const createdAt = Date.now();
    await seedSandboxes(fleet, node, 'restart-', instances);
    console.log(`${instances} instances created and linked in ${fmt((Date.now() - createdAt) / 1000, 1)} s`);
    const firstOpenAt = Date.now();
    await startNode(node);
    await waitAllOpen(node, fleet.key, instances);
    console.log(`first start with them: all open in ${Date.now() - firstOpenAt} ms`);
    await sleep(3000);
    const fullRss = rssMb(node.child?.proc.pid);
    console.log(`with ${instances} open: ${fmt(fullRss, 0)} MB resident (${fmt(((fullRss - emptyRss) * 1024) / instances, 1)} KB per instance)`);

    const load = loadAverage();
    const restarts: { upMs: number; openedMs: number; allOpenMs: number }[] = [];
    const stops: number[] = [];
    for (let run = 0; run < runs; run++) {
      const stoppingAt = Date.now();
      await stopNode(node, kill ? 'SIGKILL' : 'SIGTERM');
      stops.push(Date.now() - stoppingAt);
      const startedAt = Date.now();
      const upMs = await startNode(node);
      const openedMs = (await waitAllOpen(node, fleet.key, instances)) - startedAt;
      restarts.push({ upMs, openedMs, allOpenMs: Date.now() - startedAt });
      console.log(
        `restart ${run + 1}: stopped (${kill ? 'SIGKILL' : 'SIGTERM'}) in ${stops[run]} ms; /health after ${upMs} ms, none left to open after ${openedMs} ms, all listed open after ${restarts[run].allOpenMs} ms`,
      );
    }
    const upMs = median(restarts.map((r) => r.upMs));
    const allOpenMs = median(restarts.map((r) => r.allOpenMs));
    const ratio = allOpenMs / emptyMs;
    console.log(
      `\nA node restarted (${kill ? 'SIGKILL' : 'SIGTERM'}) with ${instances} sandbox instances on PostgreSQL, medians of ${runs}; load average ${load}\n`,
    );
    console.log('| empty node start | stop with all open | restarted: up (/health) | restarted: all open | all open / empty start | memory empty → all open |');
    console.log('|---|---|---|---|---|---|');
    console.log(
      `| ${emptyMs} ms | ${median(stops)} ms | ${upMs} ms | ${allOpenMs} ms | **${fmt(ratio, 2)}** (target ≤ ${target}: ${ratio <= target ? 'PASS' : 'FAIL'}) | ${fmt(emptyRss, 0)} → ${fmt(fullRss, 0)} MB |`,
    );
  });
}

await main();
