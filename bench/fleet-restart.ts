// A node restarted with many sandbox instances (10,000 by default) on PostgreSQL: the time from its start until every
// instance is `open`, against an empty node's start time (until GET /health answers) on the same machine in the
// same run. The target: at most twice. Also the node's resident memory empty and with every instance open
// (a rough memory cost per open sandbox instance, for sizing a fleet).
//
//   npm run bench:fleet-restart                          # 10,000 instances
//   npm run bench:fleet-restart -- --instances=2000 --kill   # SIGKILL instead of SIGTERM before the restart
import { fmt, loadAverage, sleep } from './lib-bench.js';
import { addNode, fleetBenchArgs, fleetBenchReady, rssMb, seedSandboxes, startNode, stopNode, waitAllOpen, withBenchFleet } from './fleet-lib.js';

const { instances, kill } = fleetBenchArgs({ instances: 10_000, kill: false }, '--instances=<n>, --kill');

const target = 2;

async function main(): Promise<void> {
  await fleetBenchReady({ hey: false });
  await withBenchFleet('SIGKILL', async (fleet) => {
    const node = await addNode(fleet);
    // The empty node: started twice on the empty database (the first start also migrates it), the second counts.
    const firstEmptyMs = await startNode(node);
    await stopNode(node, 'SIGTERM');
    const emptyMs = await startNode(node);
    await sleep(2000);
    const emptyRss = rssMb(node.child?.proc.pid);
    console.log(`empty node: first start ${firstEmptyMs} ms (migrations), start ${emptyMs} ms, ${fmt(emptyRss, 0)} MB resident; load ${loadAverage()}`);

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

    await stopNode(node, kill ? 'SIGKILL' : 'SIGTERM');
    const load = loadAverage();
    const startedAt = Date.now();
    const upMs = await startNode(node);
    await waitAllOpen(node, fleet.key, instances);
    const allOpenMs = Date.now() - startedAt;
    const ratio = allOpenMs / emptyMs;
    console.log(`\nA node restarted (${kill ? 'SIGKILL' : 'SIGTERM'}) with ${instances} sandbox instances on PostgreSQL; load average ${load}\n`);
    console.log('| empty node start | restarted: up (/health) | restarted: all open | all open / empty start | memory empty → all open |');
    console.log('|---|---|---|---|---|');
    console.log(
      `| ${emptyMs} ms | ${upMs} ms | ${allOpenMs} ms | **${fmt(ratio, 2)}** (target ≤ ${target}: ${ratio <= target ? 'PASS' : 'FAIL'}) | ${fmt(emptyRss, 0)} → ${fmt(fullRss, 0)} MB |`,
    );
  });
}

await main();
