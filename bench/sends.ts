// Send benchmark: sends accepted per second by Switchboard (SANDBOX instance, SQLite and PostgreSQL) against a bare
// Fastify JSON endpoint measured in the same run; prints requests/s, p50, p99, the ratio to bare and PASS/FAIL.
//
//   npm run bench                         # bare, sqlite, postgres, bare again (about a minute)
//   npm run bench -- --only=sqlite        # a subset (bare is always measured)
//   npm run bench -- --duration=10 --warmup=2 --connections=50
//   npm run bench -- --cpu-prof=/tmp/prof # also write a V8 CPU profile of each Switchboard server (see profile-summary.ts)
//   npm run bench -- --unlinked           # diagnostic: instance not linked, so the worker delivers nothing (accept path only)
//   npm run bench -- --floor              # also the floor of each store (bench/floor-server.ts): the least any server
//                                         # that stores a send before answering can do on this machine, same load
//   npm run bench -- --load=autocannon    # load from autocannon (Node, in this process); the default is wrk (C, a
//                                         # process of its own) when it is installed (`apt-get install wrk`)
//
// Every server runs in its own child process (node --import tsx).
// PostgreSQL: BENCH_POSTGRES_URL (default TEST_POSTGRES_URL or postgres://postgres@127.0.0.1:5432/test) is used to
// create a fresh database bench_<random> that is dropped afterwards; unreachable means the PostgreSQL run is skipped.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  cpuMeter,
  fmt,
  freePort,
  freshPostgresDatabase,
  installExitHandlers,
  killAllNow,
  percentile,
  pgUrl,
  postgresUnreachable,
  serverNodeFlags,
  startChild,
  stopChild,
  waitReady,
  type CpuShare,
  benchArg,
} from './lib-bench.js';
import { runWrk, wrkMissing } from './wrk.js';
import autocannon from 'autocannon';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';

// ---------------------------------------------------------------------------------------------------------------
// Settings

const targets = { ratio: 0.3, p99Ms: 10 };

interface Options {
  connections: number;
  warmupS: number;
  durationS: number;
  only: Set<string> | undefined;
  cpuProfDir: string | undefined;
  /** Diagnostic: leave the instance unlinked, so sends are accepted and queued but the worker delivers nothing. */
  unlinked: boolean;
  /** Also measure each store's floor (bench/floor-server.ts). */
  floor: boolean;
  /** The load generator: wrk (a C program, half the CPU per request) where installed, else autocannon (in this process). */
  load: 'autocannon' | 'wrk';
}

function parseArgs(argv: string[]): Options {
  const options: Options = {
    connections: 50,
    warmupS: 2,
    durationS: 10,
    only: undefined,
    cpuProfDir: undefined,
    unlinked: false,
    floor: false,
    load: wrkMissing() ? 'autocannon' : 'wrk',
  };
  for (const arg of argv) {
    const { name, value, num } = benchArg(arg);
    if (name === 'connections') options.connections = Math.round(num());
    else if (name === 'warmup') options.warmupS = num();
    else if (name === 'duration') options.durationS = num();
    else if (name === 'only') options.only = new Set(value.split(',').map((s) => s.trim()));
    else if (name === 'unlinked') options.unlinked = true;
    else if (name === 'floor') options.floor = true;
    else if (name === 'load') {
      if (value !== 'autocannon' && value !== 'wrk') throw new Error('--load takes autocannon or wrk');
      options.load = value;
    } else if (name === 'cpu-prof') options.cpuProfDir = resolve(value || join(tmpdir(), 'switchboard-bench-prof'));
    else
      throw new Error(
        `unknown option ${arg} (known: --connections --warmup --duration --only=sqlite,postgres --cpu-prof=<dir> --unlinked --floor --load=autocannon|wrk)`,
      );
  }
  return options;
}

const sendBody = JSON.stringify({ number: '5511988887777', text: 'bench' });

installExitHandlers();

// ---------------------------------------------------------------------------------------------------------------
// Load

interface Load {
  url: string;
  headers: Record<string, string>;
  body: string;
}

interface Measured {
  accepted: number;
  total: number;
  durationS: number;
  rps: number;
  acP50: number;
  acP99: number;
  p50: number;
  p99: number;
  problems: string[];
  cpu: CpuShare;
}

async function runLoad(load: Load, connections: number, seconds: number, pid: number | undefined, generator: Options['load']): Promise<Measured> {
  return generator === 'wrk' ? runWrkLoad(load, connections, seconds, pid) : runAutocannon(load, connections, seconds, pid);
}

async function runWrkLoad(load: Load, connections: number, seconds: number, pid: number | undefined): Promise<Measured> {
  const meter = cpuMeter(pid);
  const result = await runWrk(load, connections, seconds);
  const cpu = meter();
  // wrk is a child process: its CPU is counted from its own times, not in "other".
  const driver = result.cpuS / result.durationS;
  cpu.other = cpu.other === undefined ? undefined : Math.max(0, cpu.other - driver);
  cpu.driver = driver;
  const problems: string[] = [];
  if (result.badStatus > 0) problems.push(`${result.badStatus} answers with status ≥ 400`);
  const socketErrors = result.connectErrors + result.readErrors + result.writeErrors + result.timeouts;
  if (socketErrors > 0) problems.push(`${socketErrors} connection errors (${result.timeouts} timeouts)`);
  if (result.requests === 0) problems.push('no answers at all');
  // wrk counts statuses ≥ 400 only: a run is valid when there are none, and the store check below matches stored
  // sends against the answers.
  const accepted = result.requests - result.badStatus;
  return {
    accepted,
    total: result.requests,
    durationS: result.durationS,
    rps: accepted / result.durationS,
    acP50: result.p50Ms,
    acP99: result.p99Ms,
    p50: result.p50Ms,
    p99: result.p99Ms,
    problems,
    cpu,
  };
}

async function runAutocannon(load: Load, connections: number, seconds: number, pid: number | undefined): Promise<Measured> {
  const samples: number[] = [];
  const meter = cpuMeter(pid);
  const result = await new Promise<autocannon.Result>((done, fail) => {
    const instance = autocannon(
      { url: load.url, method: 'POST', headers: load.headers, body: load.body, connections, duration: seconds, pipelining: 1 },
      (error: unknown, res: autocannon.Result) => (error ? fail(error) : done(res)),
    );
    // Exact latencies (autocannon's histogram keeps whole milliseconds only).
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => samples.push(responseTime));
  });
  const cpu = meter();
  const sorted = Float64Array.from(samples).sort();
  const codes = result.statusCodeStats ?? {};
  const accepted = codes['201']?.count ?? 0;
  const total = Object.values(codes).reduce((sum, c) => sum + (c?.count ?? 0), 0);
  const problems: string[] = [];
  const others = Object.entries(codes).filter(([code]) => code !== '201');
  if (others.length > 0) problems.push(`answers other than 201: ${others.map(([code, c]) => `${code}×${c?.count ?? 0}`).join(', ')}`);
  if (result.errors > 0) problems.push(`${result.errors} connection errors (${result.timeouts} timeouts)`);
  if (result.mismatches > 0) problems.push(`${result.mismatches} mismatches`);
  if (total === 0) problems.push('no answers at all');
  return {
    accepted,
    total,
    durationS: result.duration,
    rps: accepted / result.duration,
    acP50: result.latency.p50,
    acP99: result.latency.p99,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    problems,
    cpu,
  };
}

/** Warm-up (discarded, but its errors count), then the measured window. */
async function warmAndMeasure(name: string, load: Load, options: Options, pid: number | undefined) {
  process.stdout.write(`  ${name}: warm-up ${options.warmupS} s … `);
  const warm = await runLoad(load, options.connections, options.warmupS, pid, options.load);
  process.stdout.write(`measuring ${options.durationS} s … `);
  const measured = await runLoad(load, options.connections, options.durationS, pid, options.load);
  process.stdout.write(`${Math.round(measured.rps)} req/s\n`);
  measured.problems.unshift(...warm.problems.map((p) => `warm-up: ${p}`));
  return { warm, measured };
}

// ---------------------------------------------------------------------------------------------------------------
// The runs

interface Row {
  name: string;
  m: Measured;
  notes: string[];
}

async function runBare(options: Options, label: string, script = 'bench/bare-server.ts', env: Record<string, string> = {}): Promise<Row> {
  const port = await freePort();
  const child = startChild(label, script, { PORT: String(port), ...env });
  try {
    const url = `http://127.0.0.1:${port}/send`;
    const headers = { 'content-type': 'application/json', apikey: 'x'.repeat(32) };
    await waitReady(child, async () => (await fetch(url, { method: 'POST', headers, body: sendBody })).status === 201);
    const { measured } = await warmAndMeasure(label, { url, headers, body: sendBody }, options, child.proc.pid);
    return { name: label, m: measured, notes: [] };
  } finally {
    await stopChild(child);
  }
}

interface StoreSetup {
  uri: string;
  /** Counts after the server stopped: messages stored and sends still queued for the worker. */
  count(): Promise<{ messages: number; queued: number }>;
  dispose(): Promise<void>;
}

function sqliteSetup(dir: string): StoreSetup {
  const path = join(dir, 'bench.db');
  return {
    uri: `file:${path}`,
    async count() {
      const db = new SqliteDatabase(path, { readonly: true });
      try {
        const messages = (db.prepare('select count(*) as n from messages').get() as { n: number }).n;
        const queued = (db.prepare('select count(*) as n from send_queue').get() as { n: number }).n;
        return { messages, queued };
      } finally {
        db.close();
      }
    },
    async dispose() {},
  };
}

async function postgresSetup(): Promise<StoreSetup> {
  const database = await freshPostgresDatabase();
  return {
    uri: database.uri,
    async count() {
      const client = new pg.Client({ connectionString: database.uri });
      await client.connect();
      try {
        const messages = Number((await client.query('select count(*) as n from messages')).rows[0].n);
        const queued = Number((await client.query('select count(*) as n from send_queue')).rows[0].n);
        return { messages, queued };
      } finally {
        await client.end();
      }
    },
    dispose: () => database.drop(),
  };
}

async function runSwitchboard(options: Options, name: string, setup: StoreSetup, dataDir: string): Promise<Row> {
  const port = await freePort();
  const globalKey = `bench-${randomBytes(12).toString('hex')}`;
  const base = `http://127.0.0.1:${port}`;
  // One folder per run: V8 writes one profile per thread (the tsx loader has its own thread); the largest is the server.
  const nodeFlags = [
    ...serverNodeFlags,
    ...(options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${join(options.cpuProfDir, `${name.replace(/\W+/g, '-')}-${Date.now()}`)}`] : []),
  ];
  const child = startChild(
    name,
    'src/main.ts',
    {
      AUTHENTICATION_API_KEY: globalKey,
      // The bench drives instance keys far past RATE_LIMIT_MAX: it measures the service, not its rate limit.
      RATE_LIMIT_ENABLED: 'false',
      SERVER_PORT: String(port),
      SERVER_HOST: '127.0.0.1',
      SERVER_URL: base,
      DATA_DIR: dataDir,
      DATABASE_CONNECTION_URI: setup.uri,
      LOG_LEVEL: 'warn',
    },
    nodeFlags,
  );
  let stopped = false;
  try {
    await waitReady(child, async () => (await fetch(`${base}/health`)).status === 200);
    const api = async (path: string, key: string, body: unknown) => {
      const response = await fetch(`${base}/messenger/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', apikey: key },
        body: JSON.stringify(body),
      });
      // biome-ignore lint/suspicious/noExplicitAny: the answers are read field by field
      return { status: response.status, body: (await response.json()) as any };
    };
    const instanceName = 'bench';
    const created = await api('instance/create', globalKey, { instanceName, integration: 'SANDBOX', qrcode: true });
    if (created.status !== 201) throw new Error(`instance/create answered ${created.status}: ${JSON.stringify(created.body)}`);
    if (!options.unlinked) {
      const scan = await api('sandbox/scan', globalKey, { code: created.body.qrcode.code, number: '5511900000001' });
      if (scan.status !== 200) throw new Error(`sandbox/scan answered ${scan.status}: ${JSON.stringify(scan.body)}`);
    }
    const apikey = created.body.hash.apikey as string;
    const path = `message/sendText/${instanceName}`;
    const probe = await api(path, apikey, JSON.parse(sendBody));
    if (probe.status !== 201 || probe.body?.status !== 'PENDING') throw new Error(`probe send answered ${probe.status}: ${JSON.stringify(probe.body)}`);

    const load = { url: `${base}/messenger/${path}`, headers: { 'content-type': 'application/json', apikey }, body: sendBody };
    const { warm, measured } = await warmAndMeasure(name, load, options, child.proc.pid);

    await stopChild(child);
    stopped = true;
    const notes: string[] = [];
    const written = measured.cpu.serverWriteBytes;
    // PostgreSQL writes in its own processes, so only SQLite's writes are the server's.
    if (written !== undefined && measured.accepted > 0 && setup.uri.startsWith('file:')) {
      notes.push(
        `server process wrote ${(written / 1e6).toFixed(0)} MB to storage in the measured window (${(written / measured.accepted / 1024).toFixed(1)} KiB per accepted send)`,
      );
    }
    if (child.proc.exitCode !== 0) notes.push(`server exit code ${child.proc.exitCode ?? child.proc.signalCode}`);
    // Stored = answered 201 (probe, warm-up, measured) plus up to one request per connection in flight when each
    // autocannon window closed (the server stored them; autocannon stopped before reading the answer).
    const answered = 1 + warm.accepted + measured.accepted;
    const inFlight = 2 * options.connections;
    const counts = await setup.count();
    if (counts.messages < answered || counts.messages > answered + inFlight) {
      measured.problems.push(`store holds ${counts.messages} messages, but ${answered} sends were answered 201 (+ at most ${inFlight} in flight)`);
    }
    notes.push(
      `${counts.messages} messages stored for ${answered} answers 201 (+${counts.messages - answered} in flight at window ends); ` +
        `${counts.queued} still queued for the worker at stop`,
    );
    const log = child.output.join('').trim();
    if (log) notes.push(`server output (tail): ${log.slice(-600).replace(/\s+/g, ' ')}`);
    return { name, m: measured, notes };
  } finally {
    if (!stopped) await stopChild(child);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Report

function printTable(rows: Row[], baseline: number): void {
  const header = ['run', 'req/s (201)', 'ratio', 'p50 ms', 'p99 ms', 'p50 ms (exact)', 'p99 ms (exact)', 'answers', 'CPU srv/drv/other', 'verdict'];
  const lines = rows.map((row) => {
    const { m } = row;
    const isBare = row.name.startsWith('bare');
    const ratio = m.rps / baseline;
    const worstP99 = Math.max(m.acP99, m.p99);
    const misses: string[] = [];
    if (ratio < targets.ratio) misses.push(`ratio<${targets.ratio}`);
    if (!(worstP99 < targets.p99Ms)) misses.push(`p99≥${targets.p99Ms}ms`);
    let verdict: string;
    if (m.problems.length > 0) verdict = 'INVALID';
    else if (isBare) verdict = 'baseline';
    else if (row.name.startsWith('floor')) verdict = misses.length === 0 ? 'floor (meets targets)' : `floor (misses: ${misses.join(', ')})`;
    else verdict = misses.length === 0 ? 'PASS' : `FAIL (${misses.join(', ')})`;
    return [
      row.name,
      String(Math.round(m.rps)),
      isBare ? fmt(ratio, 2) : fmt(ratio, 3),
      String(m.acP50),
      String(m.acP99),
      fmt(m.p50, 2),
      fmt(m.p99, 2),
      String(m.total),
      `${fmt(m.cpu.server, 2)}/${fmt(m.cpu.driver, 2)}/${fmt(m.cpu.other, 2)}`,
      verdict,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const render = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(render(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const line of lines) console.log(render(line));
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const missing = wrkMissing();
  if (options.load === 'wrk' && missing) throw new Error(`--load=wrk: ${missing}`);
  const wants = (name: string) => !options.only || options.only.has(name);
  const started = Date.now();
  console.log(`Switchboard send benchmark — ${new Date().toISOString()}`);
  console.log(
    `node ${process.version}, ${availableParallelism()} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; ` + `${options.connections} connections, warm-up ${options.warmupS} s, measured ${options.durationS} s each, load from ${options.load}`,
  );
  console.log(`targets: ratio ≥ ${targets.ratio} of bare Fastify, p99 < ${targets.p99Ms} ms\n`);
  if (options.load === 'autocannon' && missing) {
    console.log(`NOTE: ${missing}; autocannon runs in this Node process and takes CPU the server under test would have (about twice wrk's per request).\n`);
  }
  if (options.unlinked) console.log('DIAGNOSTIC MODE --unlinked: the instance is not linked; sends are queued, never delivered. Not the benchmark.\n');

  const rows: Row[] = [];
  const skipped: string[] = [];
  rows.push(await runBare(options, 'bare fastify'));

  if (wants('sqlite')) {
    const dir = mkdtempSync(join(tmpdir(), 'sb-bench-sqlite-'));
    try {
      if (options.floor) rows.push(await runBare(options, 'floor sqlite', 'bench/floor-server.ts', { FLOOR_SQLITE_PATH: join(dir, 'floor.db') }));
      rows.push(await runSwitchboard(options, 'switchboard sqlite', sqliteSetup(dir), join(dir, 'data')));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  if (wants('postgres')) {
    const unreachable = await postgresUnreachable();
    if (unreachable) {
      const message = `PostgreSQL not reachable at ${pgUrl} (${unreachable}): the PostgreSQL run is SKIPPED`;
      console.log(`\n*** ${message} ***\n`);
      skipped.push(message);
    } else {
      const setup = await postgresSetup();
      const dir = mkdtempSync(join(tmpdir(), 'sb-bench-pg-'));
      try {
        if (options.floor) rows.push(await runBare(options, 'floor postgres', 'bench/floor-server.ts', { FLOOR_POSTGRES_URL: setup.uri }));
        rows.push(await runSwitchboard(options, 'switchboard postgres', setup, dir));
      } finally {
        rmSync(dir, { recursive: true, force: true });
        await setup.dispose().catch((error: unknown) => console.error(`could not drop the bench database: ${String(error)}`));
      }
    }
  }

  // Bare again at the end: shows how much the machine's speed drifted during the run (other work on the host).
  rows.push(await runBare(options, 'bare fastify (again)'));
  const bares = rows.filter((r) => r.name.startsWith('bare'));
  const baseline = bares.reduce((sum, r) => sum + r.m.rps, 0) / bares.length;
  const drift = bares.length === 2 ? Math.abs(bares[0].m.rps - bares[1].m.rps) / baseline : 0;

  console.log('');
  printTable(rows, baseline);
  console.log('');
  console.log(`ratio = req/s ÷ ${Math.round(baseline)} (mean of the two bare runs; they differ by ${(drift * 100).toFixed(1)} %).`);
  console.log(
    options.load === 'wrk'
      ? "p50/p99 ms: wrk's histogram (µs resolution), in both column pairs. PASS needs p99 < target."
      : 'p50/p99 ms: autocannon histogram (whole ms); "exact": from every response time. PASS needs both p99 < target.',
  );
  if (options.floor)
    console.log(
      'floor: Fastify plus one group-committed insert of (id, body) per batch in the same store (bench/floor-server.ts): the least a server that stores each send before answering does.',
    );
  console.log(
    `CPU srv/drv/other: cores used during the measured window by the server process, the load generator (${options.load}), and everything else (incl. PostgreSQL).`,
  );
  if (drift > 0.1) console.log(`WARNING: the bare runs differ by ${(drift * 100).toFixed(1)} %: the machine was busy with other work; compare with care.`);
  // The p99 target is absolute: on a machine where even bare Fastify misses it, no server can show it.
  const bareP99 = Math.min(...bares.map((r) => Math.max(r.m.acP99, r.m.p99)));
  if (!(bareP99 < targets.p99Ms)) {
    console.log(
      `WARNING: bare Fastify's own p99 is ${fmt(bareP99, 2)} ms (its better run), not under the ${targets.p99Ms} ms target: this machine is too ` +
        "slow or too busy to show the p99 target for any server; compare the p99 to the bare runs' instead.",
    );
  }
  for (const row of rows) {
    for (const problem of row.m.problems) console.log(`INVALID ${row.name}: ${problem}`);
    for (const note of row.notes) console.log(`note ${row.name}: ${note}`);
  }
  for (const message of skipped) console.log(`SKIPPED: ${message}`);
  if (options.cpuProfDir) console.log(`CPU profiles written to ${options.cpuProfDir} (npx tsx bench/profile-summary.ts <file>)`);
  console.log(
    `load average at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; total ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );

  const invalid = rows.some((r) => r.m.problems.length > 0);
  if (invalid) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(`benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  killAllNow();
  process.exitCode = 1;
});
