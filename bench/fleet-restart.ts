// A node restarted with many sandbox instances (10,000 by default) on PostgreSQL: the time from its start until every
// instance is `open`, against an empty node's start time (until GET /health answers) on the same machine in the
// same run. The target: at most twice. Also the node's resident memory empty and with every instance open
// (a rough memory cost per open sandbox instance, for sizing a fleet).
//
//   npm run bench:fleet-restart                          # 10,000 instances
//   npm run bench:fleet-restart -- --instances=2000 --kill   # SIGKILL instead of SIGTERM before the restart
import { fmt, loadAverage, sleep } from './lib-bench.js';
import { addNode, createSandboxes, fleetBenchArgs, fleetBenchReady, openCount, rssMb, startNode, stopNode, withBenchFleet } from './fleet-lib.js';

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

    const createdAt = Date.now();
    await createSandboxes(node, fleet.key, 'restart-', instances, 8);
    console.log(`${instances} instances created and linked in ${fmt((Date.now() - createdAt) / 1000, 1)} s`);
    await sleep(3000);
    const fullRss = rssMb(node.child?.proc.pid);
    console.log(`with ${instances} open: ${fmt(fullRss, 0)} MB resident (${fmt(((fullRss - emptyRss) * 1024) / instances, 1)} KB per instance)`);

    await stopNode(node, kill ? 'SIGKILL' : 'SIGTERM');
    const load = loadAverage();
    const startedAt = Date.now();
    const upMs = await startNode(node);
    let open = 0;
    while (open < instances) {
      open = await openCount(node, fleet.key).catch(() => -1);
      if (Date.now() - startedAt > 600_000) throw new Error(`only ${open} of ${instances} open after 10 minutes`);
      if (open < instances) await sleep(250);
    }
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
