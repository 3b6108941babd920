// CPU time the server process spends per accepted send on PostgreSQL at a fixed rate (2,000 sends/s by default): one
// node as in bench/fleet-p99.ts, `hey` at the rate, then the process's CPU (utime + stime from /proc, every thread)
// from the start of the load until the send worker has sent every send (send_queue empty), less its idle rate,
// divided by the 201 answers; and the database's transactions and rows written per send.
// Robust on a shared machine where wall-clock percentiles are not.
//
//   npm run bench:fleet-cpu -- --rate=2000 --duration=10 --runs=3
//   BENCH_NODE_ENV='{"SEND_WORKER_POLL_MS":"50"}' npm run bench:fleet-cpu   # extra settings for the node (JSON)
//   BENCH_NODE_FLAGS="--max-semi-space-size=64 --cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench:fleet-cpu
//     (with BENCH_IDLE_SHARE=0.4: the profiler's threads keep the node busier than 8 % of a core; the profile of the whole process; the run prints when each load started, in ms after the node was spawned,
//      for bench/cpu-profile-summary.ts --from=<ms>)
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { fmt, sleep } from './lib-bench.js';
import { addNode, createSandboxes, fleetBenchArgs, fleetBenchReady, queuedSends, runHey, startNode, withBenchFleet } from './fleet-lib.js';

const {
  rate,
  duration: durationS,
  workers,
  runs,
} = fleetBenchArgs({ rate: 2000, duration: 10, workers: 200, runs: 3 }, '--rate=<sends/s>, --duration=<s>, --workers=<n>, --runs=<n>');

const ticksPerS = 100;
/** Below this share of a core the node counts as idle (a profiled node spends some in its profiler: raise it then). */
const idleCpuShare = Number(process.env.BENCH_IDLE_SHARE ?? 0.08);

function cpuTicks(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * Waits until the send worker has sent every queued send and the process uses under `idleShare` of a core over a 1 s
 * window; answers that window's share.
 */
async function settle(pid: number | undefined, uri: string, idleShare = idleCpuShare, timeoutMs = 300_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const before = cpuTicks(pid);
    await sleep(1000);
    const share = (cpuTicks(pid) - before) / ticksPerS;
    if (Date.now() > deadline) throw new Error('the node did not settle (sends still queued or CPU busy)');
    if (share < idleShare && (await queuedSends(uri)) === 0) return share;
  }
}

/** The database's counters (pg_stat_database): transactions committed and rows written. */
async function databaseCounters(uri: string, name: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: uri });
  await client.connect();
  try {
    const row = (
      await client.query(
        'select pg_stat_clear_snapshot(), xact_commit::float8 as commits, tup_inserted::float8 as inserted, tup_updated::float8 as updated, tup_deleted::float8 as deleted from pg_stat_database where datname = $1',
        [name],
      )
    ).rows[0] as Record<string, number>;
    return { commits: row.commits, inserted: row.inserted, updated: row.updated, deleted: row.deleted };
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  await fleetBenchReady({ hey: true });
  await withBenchFleet('SIGTERM', async (fleet) => {
    const databaseName = new URL(fleet.uri).pathname.slice(1);
    const node = await addNode(fleet, process.env.BENCH_NODE_ENV ? (JSON.parse(process.env.BENCH_NODE_ENV) as Record<string, string>) : {});
    const spawnedAt = Date.now();
    await startNode(node);
    const pid = node.child?.proc.pid;
    await createSandboxes(node, fleet.key, 'cpu-', 2);
    const url = `${node.base}/messenger/message/sendText/cpu-0`;
    const body = JSON.stringify({ number: '491700000001', text: 'cpu per send at a fixed rate' });
    const load = { url, headers: { apikey: fleet.key }, body, workers, perWorkerRate: rate / workers };
    await runHey({ ...load, seconds: 3 }); // warm-up (JIT)
    const perSend: number[] = [];
    for (let run = 0; run < runs; run++) {
      const idle = await settle(pid, fleet.uri);
      const counters = await databaseCounters(fleet.uri, databaseName);
      const from = cpuTicks(pid);
      const startedAt = Date.now();
      const result = await runHey({ ...load, seconds: durationS });
      const loadEndedAt = Date.now();
      await settle(pid, fleet.uri);
      const drainedS = (Date.now() - loadEndedAt) / 1000 - 1; // less the idle window settle saw last
      await sleep(1000); // the statistics collector reports at most once a second
      const after = await databaseCounters(fleet.uri, databaseName);
      const elapsedS = (Date.now() - startedAt) / 1000;
      const usedS = (cpuTicks(pid) - from) / ticksPerS - idle * elapsedS;
      const accepted = result.statuses['201'] ?? 0;
      const ms = (usedS * 1000) / accepted;
      perSend.push(ms);
      const rows = Object.keys(after)
        .map((counter) => `${counter} ${fmt((after[counter] - counters[counter]) / accepted, 2)}`)
        .join(', ');
      console.log(
        `run ${run + 1} (load from ${startedAt - spawnedAt} ms after spawn): ${accepted} accepted at ${fmt(result.requestsPerS, 0)}/s, ` +
          `p50 ${fmt(result.p50Ms, 1)} ms, p99 ${fmt(result.p99Ms, 1)} ms; queue sent ${fmt(drainedS, 1)} s after the load; server CPU ${fmt(usedS, 2)} s (idle ${fmt(idle * 100, 1)} %) = ${fmt(ms, 3)} ms per send; per send in the database: ${rows}`,
      );
    }
    const sorted = [...perSend].sort((a, b) => a - b);
    console.log(`CPU per send (median of ${runs}): ${fmt(sorted[Math.floor(sorted.length / 2)], 3)} ms`);
  });
}

await main();
