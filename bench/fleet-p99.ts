// Send p99 on PostgreSQL at a fixed rate (2,000 sends/s by default) against a bare Node HTTP endpoint's p99 at the
// same rate in the same run: bare, Switchboard, bare again, Switchboard again; the ratio uses the mean of each pair.
// Each run (after a 2 s warm-up) starts with every accepted send sent: no run pays for the backlog of the one before.
//
//   npm run bench:fleet-p99                        # 2,000/s for 10 s per run
//   npm run bench:fleet-p99 -- --rate=1000 --duration=20 --workers=200
//
// The load: `hey -q <rate/workers> -c <workers>` from a process of its own. hey's workers each send at a fixed rate
// but wait for each answer, so the load is open-loop only while an answer takes less than workers/rate seconds (100 ms
// at 2,000/s with 200 workers); past that it falls behind (the achieved rate is printed next to each run).
import { fmt, freePort, loadAverage, serverNodeFlags, sleep, startChild, stopChild, waitReady } from './lib-bench.js';
import { addNode, createSandboxes, drainedSends, fleetBenchArgs, fleetBenchReady, runHey, startNode, withBenchFleet, type HeyResult } from './fleet-lib.js';

const { rate, duration: durationS, workers } = fleetBenchArgs({ rate: 2000, duration: 10, workers: 200 }, '--rate=<sends/s>, --duration=<s>, --workers=<n>');

const target = 2;

async function main(): Promise<void> {
  await fleetBenchReady({ hey: true });
  await withBenchFleet('SIGTERM', async (fleet) => {
    const barePort = await freePort();
    const bare = startChild('bare', 'bench/bare-server.ts', { PORT: String(barePort) }, serverNodeFlags);
    try {
      await waitReady(
        bare,
        async () =>
          (await fetch(`http://127.0.0.1:${barePort}/send`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status === 201,
      );
      const node = await addNode(fleet);
      await startNode(node);
      await createSandboxes(node, fleet.key, 'p99-', 2);
      const body = JSON.stringify({ number: '491700000001', text: 'p99 at a fixed rate' });
      const perWorker = rate / workers;
      const runs: { name: string; result: HeyResult; load: string }[] = [];
      const run = async (name: string, url: string, headers: Record<string, string>) => {
        const load = loadAverage();
        await runHey({ url, headers, body, seconds: 2, workers, perWorkerRate: perWorker }); // warm-up
        await drainedSends(fleet.uri);
        const result = await runHey({ url, headers, body, seconds: durationS, workers, perWorkerRate: perWorker });
        runs.push({ name, result, load });
        console.log(
          `${name}: ${fmt(result.requestsPerS, 0)}/s achieved, p50 ${fmt(result.p50Ms, 2)} ms, p99 ${fmt(result.p99Ms, 2)} ms, ${JSON.stringify(result.statuses)}, load ${load}`,
        );
        // The send worker goes on sending after the load ends (one chat's messages in order, slower than 2,000/s):
        // each measured run starts once it has sent everything, on an idle node.
        await drainedSends(fleet.uri);
        await sleep(1000);
      };
      const sendUrl = `${node.base}/messenger/message/sendText/p99-0`;
      for (let round = 0; round < 2; round++) {
        await run('bare', `http://127.0.0.1:${barePort}/send`, {});
        await run('switchboard (PostgreSQL)', sendUrl, { apikey: fleet.key });
      }
      const mean = (name: string) => {
        const of = runs.filter((r) => r.name === name).map((r) => r.result.p99Ms);
        return of.reduce((a, b) => a + b, 0) / of.length;
      };
      const ratio = mean('switchboard (PostgreSQL)') / mean('bare');
      console.log(`\nSend p99 at ${rate}/s (hey -c ${workers} -q ${fmt(perWorker, 1)}, ${durationS} s per run)\n`);
      console.log('| server | achieved/s | p50 ms | p99 ms | answers | load average |');
      console.log('|---|---|---|---|---|---|');
      for (const r of runs)
        console.log(
          `| ${r.name} | ${fmt(r.result.requestsPerS, 0)} | ${fmt(r.result.p50Ms, 2)} | ${fmt(r.result.p99Ms, 2)} | ${JSON.stringify(r.result.statuses)} | ${r.load} |`,
        );
      console.log(`\np99 ratio Switchboard / bare: ${fmt(ratio, 2)} (target ≤ ${target}): ${ratio <= target ? 'PASS' : 'FAIL'}`);
    } finally {
      await stopChild(bare);
    }
  });
}

await main();
