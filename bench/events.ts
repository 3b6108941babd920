// Events benchmark: webhook events delivered per second to a local receiver, and the delivery lag (arrival time minus
// the envelope's date_time) at a steady 1,000 sends/s, for SQLite and (when reachable) PostgreSQL.
//
//   npx tsx bench/events.ts                          # sqlite, then postgres; about 1–2 minutes
//   npx tsx bench/events.ts --only=sqlite
//   npx tsx bench/events.ts --sends=5000 --concurrency=64 --rate=1000 --duration=10 --warmup=300 --drain-timeout=90
//   npx tsx bench/events.ts --cpu-prof=/tmp/prof     # V8 CPU profile of each server (npx tsx bench/profile-summary.ts <file>)
//
// Setup per store: Switchboard in a child process (LOG_LEVEL=warn, temporary DATA_DIR); two SANDBOX instances A and B,
// linked through sandbox/scan; a webhook on each, all events, to a node:http receiver in this process that answers 200
// at once and records each delivery's id, event, instance, date_time and arrival time. Every send A→B yields events on
// both: send.message and messages.update (SERVER_ACK, DELIVERY_ACK) on A, messages.upsert on B.
//   warm-up     a few hundred sends, drained, not measured;
//   throughput  a burst of --sends sends (--concurrency in flight), then events/s until the outbox is drained;
//   lag         --rate sends/s paced for --duration s, then drained; lag percentiles over every event of the phase.
// Drained means: no queued send and no pending webhook delivery in the store (polled read-only from here).
// Validity: after the server stops, every instance delivery in the store must have reached the receiver exactly once.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { Pool } from 'undici';
import {
  cpuMeter,
  fmt,
  freePort,
  freshPostgresDatabase,
  installExitHandlers,
  killAllNow,
  loadAverage,
  onInterrupt,
  percentile,
  pgUrl,
  postgresUnreachable,
  renderTable,
  sleep,
  startChild,
  stopChild,
  waitReady,
  type Child,
  type CpuShare,
} from './lib-bench.js';

const targets = { eventsPerS: 5_000, lagP99Ms: 100 };

interface Options {
  sends: number;
  concurrency: number;
  rate: number;
  durationS: number;
  warmup: number;
  drainTimeoutS: number;
  only: Set<string> | undefined;
  cpuProfDir: string | undefined;
}

function parseArgs(argv: string[]): Options {
  const options: Options = { sends: 5_000, concurrency: 64, rate: 1_000, durationS: 10, warmup: 300, drainTimeoutS: 90, only: undefined, cpuProfDir: undefined };
  for (const arg of argv) {
    const [name, value = ''] = arg.replace(/^--/, '').split('=', 2);
    const num = () => {
      const n = Number(value);
      if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} needs a positive number`);
      return n;
    };
    if (name === 'sends') options.sends = Math.round(num());
    else if (name === 'concurrency') options.concurrency = Math.round(num());
    else if (name === 'rate') options.rate = num();
    else if (name === 'duration') options.durationS = num();
    else if (name === 'warmup') options.warmup = Math.round(num());
    else if (name === 'drain-timeout') options.drainTimeoutS = num();
    else if (name === 'only') options.only = new Set(value.split(',').map((s) => s.trim()));
    else if (name === 'cpu-prof') options.cpuProfDir = resolve(value || join(tmpdir(), 'switchboard-bench-prof'));
    else throw new Error(`unknown option ${arg} (known: --sends --concurrency --rate --duration --warmup --drain-timeout --only=sqlite,postgres --cpu-prof=<dir>)`);
  }
  return options;
}

/** Epoch milliseconds with sub-millisecond resolution (same clock as Date.now()). */
const nowMs = () => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------------------------------------------------------
// The receiver

interface Arrival {
  id: string;
  event: string;
  instance: string;
  /** The envelope's date_time (when the event was written), epoch ms. */
  writtenMs: number;
  arrivedMs: number;
}

class Receiver {
  readonly arrivals: Arrival[] = [];
  /** Times each event id arrived, over the whole store run. */
  readonly seen = new Map<string, number>();
  /** Bodies that were not an event envelope. */
  malformed = 0;
  private readonly server = createServer((req, res) => this.handle(req, res));
  port = 0;

  async listen(): Promise<void> {
    this.server.keepAliveTimeout = 65_000;
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
  }

  reset(): void {
    this.arrivals.length = 0;
    this.seen.clear();
    this.malformed = 0;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const arrivedMs = nowMs();
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown; event?: unknown; instance?: unknown; date_time?: unknown };
        const writtenMs = typeof body.date_time === 'string' ? Date.parse(body.date_time) : Number.NaN;
        if (typeof body.id !== 'string' || Number.isNaN(writtenMs)) throw new Error('not an envelope');
        this.arrivals.push({ id: body.id, event: String(body.event), instance: String(body.instance), writtenMs, arrivedMs });
        this.seen.set(body.id, (this.seen.get(body.id) ?? 0) + 1);
      } catch {
        this.malformed++;
      }
    });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The store, read from here: is everything delivered, and what was queued

interface StoreProbe {
  uri: string;
  /** Sends not yet delivered by the worker, and webhook deliveries still pending. */
  backlog(): Promise<{ queued: number; pending: number }>;
  /** Every webhook delivery the store holds. */
  deliveries(): Promise<{ event_id: string; state: string; target: string; instance_name: string }[]>;
  close(): Promise<void>;
}

const backlogSql = "select (select count(*) from send_queue) as queued, (select count(*) from deliveries where state = 'pending') as pending";
const deliveriesSql = 'select event_id, state, target, instance_name from deliveries';

function sqliteProbe(path: string): StoreProbe {
  let db: SqliteDatabase.Database | undefined;
  const open = () => (db ??= new SqliteDatabase(path, { readonly: true, fileMustExist: true }));
  return {
    uri: `file:${path}`,
    async backlog() {
      const row = open().prepare(backlogSql).get() as { queued: number; pending: number };
      return { queued: Number(row.queued), pending: Number(row.pending) };
    },
    async deliveries() {
      return open().prepare(deliveriesSql).all() as { event_id: string; state: string; target: string; instance_name: string }[];
    },
    async close() {
      db?.close();
      db = undefined;
    },
  };
}

function postgresProbe(uri: string): StoreProbe {
  let client: pg.Client | undefined;
  const open = async () => {
    if (!client) {
      client = new pg.Client({ connectionString: uri });
      await client.connect();
    }
    return client;
  };
  return {
    uri,
    async backlog() {
      const row = (await (await open()).query(backlogSql)).rows[0] as { queued: string; pending: string };
      return { queued: Number(row.queued), pending: Number(row.pending) };
    },
    async deliveries() {
      return (await (await open()).query(deliveriesSql)).rows;
    },
    async close() {
      await client?.end().catch(() => undefined);
      client = undefined;
    },
  };
}

/** Waits until nothing is queued or pending; false on timeout. */
async function drain(probe: StoreProbe, timeoutMs: number, child: Child): Promise<{ drained: boolean; queued: number; pending: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) throw new Error(`server exited:\n${child.output.join('').slice(-4000)}`);
    const { queued, pending } = await probe.backlog();
    if (queued === 0 && pending === 0) return { drained: true, queued, pending };
    if (Date.now() > deadline) return { drained: false, queued, pending };
    await sleep(100);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Sending

interface Sender {
  send(): Promise<{ ok: boolean; ms: number; status: number }>;
}

function sender(pool: Pool, path: string, apikey: string, to: string): Sender {
  const headers = { 'content-type': 'application/json', apikey };
  let n = 0;
  return {
    async send() {
      const started = performance.now();
      try {
        const response = await pool.request({ path, method: 'POST', headers, body: JSON.stringify({ number: to, text: `bench ${++n}` }) });
        await response.body.dump();
        return { ok: response.statusCode === 201, ms: performance.now() - started, status: response.statusCode };
      } catch {
        return { ok: false, ms: performance.now() - started, status: 0 };
      }
    },
  };
}

interface SendStats {
  issued: number;
  accepted: number;
  failures: Map<number, number>;
  latencies: number[];
  startMs: number;
  endMs: number;
}

function newStats(): SendStats {
  return { issued: 0, accepted: 0, failures: new Map(), latencies: [], startMs: nowMs(), endMs: 0 };
}

function count(stats: SendStats, result: { ok: boolean; ms: number; status: number }): void {
  stats.latencies.push(result.ms);
  if (result.ok) stats.accepted++;
  else stats.failures.set(result.status, (stats.failures.get(result.status) ?? 0) + 1);
}

/** `total` sends with at most `concurrency` in flight, as fast as the server takes them. */
async function burst(s: Sender, total: number, concurrency: number): Promise<SendStats> {
  const stats = newStats();
  const worker = async () => {
    while (stats.issued < total) {
      stats.issued++;
      count(stats, await s.send());
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  stats.endMs = nowMs();
  return stats;
}

/** `rate` sends per second for `seconds`, on a clock (open loop; in-flight capped at `cap`, which shows as a lower rate). */
async function paced(s: Sender, rate: number, seconds: number, cap: number): Promise<SendStats & { capped: number }> {
  const stats = { ...newStats(), capped: 0 };
  const pending = new Set<Promise<void>>();
  const t0 = performance.now();
  const total = Math.round(rate * seconds);
  while (stats.issued < total) {
    const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate));
    while (stats.issued < due) {
      if (pending.size >= cap) {
        stats.capped++;
        break;
      }
      stats.issued++;
      const p: Promise<void> = s.send().then((r) => {
        count(stats, r);
        pending.delete(p);
      });
      pending.add(p);
    }
    await sleep(1);
  }
  await Promise.all(pending);
  stats.endMs = nowMs();
  return stats;
}

// ---------------------------------------------------------------------------------------------------------------
// One store

interface PhaseResult {
  name: 'throughput' | 'lag';
  sends: SendStats;
  /** Arrivals during the phase (from its first send until drained). */
  arrivals: Arrival[];
  drained: { drained: boolean; queued: number; pending: number; afterSendsMs: number };
  cpu: CpuShare;
  eventsPerS: number;
  /** Events/s after the last send was answered, while the outbox drained (NaN when that took under 1 s). */
  drainOnlyPerS: number;
  peakPerS: number;
  perSecond: number[];
  lag: { p50: number; p99: number; max: number; p99BySecond: number[] };
  byEvent: Map<string, number>;
}

interface StoreRun {
  store: string;
  phases: PhaseResult[];
  problems: string[];
  notes: string[];
}

function analyse(name: PhaseResult['name'], sends: SendStats, arrivals: Arrival[], drained: PhaseResult['drained'], cpu: CpuShare): PhaseResult {
  const t0 = sends.startMs;
  const last = arrivals.length > 0 ? arrivals[arrivals.length - 1].arrivedMs : t0;
  const spanS = Math.max(1e-3, (last - t0) / 1000);
  const afterSends = arrivals.filter((a) => a.arrivedMs > sends.endMs).length;
  const drainS = (last - sends.endMs) / 1000;
  const perSecond: number[] = [];
  for (const a of arrivals) {
    const second = Math.floor((a.arrivedMs - t0) / 1000);
    while (perSecond.length <= second) perSecond.push(0);
    perSecond[second]++;
  }
  // Whole seconds only for the peak (the last one is partial).
  const peakPerS = perSecond.length > 1 ? Math.max(...perSecond.slice(0, -1)) : arrivals.length / spanS;
  const lags = Float64Array.from(arrivals, (a) => a.arrivedMs - a.writtenMs).sort();
  const bySecond: number[][] = [];
  for (const a of arrivals) {
    const second = Math.max(0, Math.floor((a.writtenMs - t0) / 1000));
    (bySecond[second] ??= []).push(a.arrivedMs - a.writtenMs);
  }
  const byEvent = new Map<string, number>();
  for (const a of arrivals) {
    const key = `${a.event}@${a.instance}`;
    byEvent.set(key, (byEvent.get(key) ?? 0) + 1);
  }
  return {
    name,
    sends,
    arrivals,
    drained,
    cpu,
    eventsPerS: arrivals.length / spanS,
    drainOnlyPerS: drainS >= 1 ? afterSends / drainS : Number.NaN,
    peakPerS,
    perSecond,
    lag: {
      p50: percentile(lags, 0.5),
      p99: percentile(lags, 0.99),
      max: lags.length ? lags[lags.length - 1] : Number.NaN,
      p99BySecond: Array.from(bySecond, (l) => (l ? percentile(Float64Array.from(l).sort(), 0.99) : Number.NaN)),
    },
    byEvent,
  };
}

async function runStore(options: Options, store: string, receiver: Receiver, probe: StoreProbe, dataDir: string): Promise<StoreRun> {
  const port = await freePort();
  const globalKey = `bench-${randomBytes(12).toString('hex')}`;
  const base = `http://127.0.0.1:${port}`;
  const nodeFlags = options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${join(options.cpuProfDir, `events-${store}-${Date.now()}`)}`] : [];
  const child = startChild(
    `switchboard ${store}`,
    'src/main.ts',
    {
      AUTHENTICATION_API_KEY: globalKey,
      SERVER_PORT: String(port),
      SERVER_HOST: '127.0.0.1',
      SERVER_URL: base,
      DATA_DIR: dataDir,
      DATABASE_CONNECTION_URI: probe.uri,
      LOG_LEVEL: 'warn',
      // The receiver is on loopback; only the instance webhooks are measured.
      OUTBOUND_DENY_PRIVATE: 'false',
      WEBHOOK_GLOBAL_ENABLED: 'false',
    },
    nodeFlags,
  );
  const pool = new Pool(base, { connections: Math.max(options.concurrency, 64), pipelining: 1 });
  const run: StoreRun = { store, phases: [], problems: [], notes: [] };
  let stopped = false;
  try {
    await waitReady(child, async () => (await fetch(`${base}/health`)).status === 200);
    const api = async (path: string, key: string, body: unknown) => {
      const response = await fetch(`${base}/messenger/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', apikey: key },
        body: JSON.stringify(body),
      });
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answers are read field by field
      const answer = { status: response.status, body: (await response.json()) as any };
      if (answer.status >= 300) throw new Error(`${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      return answer;
    };
    const parties = [
      { name: 'bench-a', number: '5511900000001' },
      { name: 'bench-b', number: '5511900000002' },
    ];
    const keys: string[] = [];
    for (const party of parties) {
      const created = await api('instance/create', globalKey, { instanceName: party.name, integration: 'SANDBOX', qrcode: true });
      await api('sandbox/scan', globalKey, { code: created.body.qrcode.code, number: party.number });
      keys.push(created.body.hash.apikey as string);
    }
    for (const [i, party] of parties.entries()) {
      await api(`webhook/set/${party.name}`, keys[i], { webhook: { enabled: true, url: `http://127.0.0.1:${receiver.port}/hook/${store}`, events: [] } });
    }
    const s = sender(pool, `/messenger/message/sendText/${parties[0].name}`, keys[0], parties[1].number);
    const drainTimeoutMs = options.drainTimeoutS * 1000;

    process.stdout.write(`  ${store}: warm-up ${options.warmup} sends … `);
    const warm = await burst(s, options.warmup, 16);
    const warmDrain = await drain(probe, drainTimeoutMs, child);
    if (warm.accepted !== warm.issued) run.problems.push(`warm-up: ${warm.issued - warm.accepted} sends not accepted`);
    if (!warmDrain.drained) throw new Error(`warm-up did not drain within ${options.drainTimeoutS} s (${warmDrain.queued} queued, ${warmDrain.pending} pending)`);
    const perSend = receiver.arrivals.length / Math.max(1, warm.accepted);
    process.stdout.write(`${receiver.arrivals.length} events (${perSend.toFixed(2)} per send)\n`);

    const phase = async (name: PhaseResult['name'], drive: () => Promise<SendStats>): Promise<PhaseResult> => {
      const from = receiver.arrivals.length;
      const meter = cpuMeter(child.proc.pid);
      const sends = await drive();
      const result = await drain(probe, drainTimeoutMs, child);
      const cpu = meter();
      const arrivals = receiver.arrivals.slice(from);
      const afterSendsMs = (arrivals.length ? arrivals[arrivals.length - 1].arrivedMs : sends.endMs) - sends.endMs;
      return analyse(name, sends, arrivals, { ...result, afterSendsMs }, cpu);
    };

    process.stdout.write(`  ${store}: throughput — burst of ${options.sends} sends, ${options.concurrency} in flight … `);
    const throughput = await phase('throughput', () => burst(s, options.sends, options.concurrency));
    run.phases.push(throughput);
    process.stdout.write(`${throughput.arrivals.length} events, ${Math.round(throughput.eventsPerS)} events/s\n`);

    await sleep(500);
    process.stdout.write(`  ${store}: lag — ${options.rate} sends/s for ${options.durationS} s … `);
    const lag = await phase('lag', () => paced(s, options.rate, options.durationS, 512));
    run.phases.push(lag);
    process.stdout.write(`${lag.arrivals.length} events, p99 lag ${fmt(lag.lag.p99)} ms\n`);

    await stopChild(child);
    stopped = true;
    if (child.proc.exitCode !== 0) run.notes.push(`server exit code ${child.proc.exitCode ?? child.proc.signalCode}`);

    // Validity: every instance delivery the store holds reached the receiver, exactly once; nothing else arrived.
    const rows = await probe.deliveries();
    const expected = new Map(rows.filter((r) => r.target === 'instance').map((r) => [r.event_id, r.state]));
    const missing = [...expected].filter(([id]) => !receiver.seen.has(id));
    const duplicates = [...receiver.seen].filter(([, n]) => n > 1);
    const unexpected = [...receiver.seen.keys()].filter((id) => !expected.has(id));
    const states = new Map<string, number>();
    for (const state of expected.values()) states.set(state, (states.get(state) ?? 0) + 1);
    run.notes.push(
      `${expected.size} instance deliveries in the store (${[...states].map(([k, v]) => `${k} ${v}`).join(', ')}); ` +
        `${receiver.seen.size} distinct events received, ${receiver.arrivals.length} deliveries received`,
    );
    if (missing.length > 0) run.problems.push(`${missing.length} events never reached the receiver (states: ${summarise(missing.map(([, s]) => s))})`);
    if (duplicates.length > 0) run.problems.push(`${duplicates.length} events received more than once (${duplicates.reduce((n, [, c]) => n + c - 1, 0)} extra deliveries)`);
    if (unexpected.length > 0) run.problems.push(`${unexpected.length} received events have no delivery in the store`);
    if (receiver.malformed > 0) run.problems.push(`${receiver.malformed} received bodies were not event envelopes`);
    for (const p of run.phases) {
      const failures = [...p.sends.failures].map(([status, n]) => `${status || 'error'}×${n}`).join(', ');
      if (failures) run.problems.push(`${p.name}: sends not accepted: ${failures}`);
      if (!p.drained.drained) run.problems.push(`${p.name}: not drained within ${options.drainTimeoutS} s (${p.drained.queued} sends queued, ${p.drained.pending} deliveries pending)`);
      // Each accepted send: send.message, messages.update ×2 on A; messages.upsert on B.
      const n = p.sends.accepted;
      const want: [string, number][] = [
        ['send.message@bench-a', n],
        ['messages.update@bench-a', 2 * n],
        ['messages.upsert@bench-b', n],
      ];
      const off = want.filter(([key, w]) => (p.byEvent.get(key) ?? 0) !== w).map(([key, w]) => `${key} ${p.byEvent.get(key) ?? 0}/${w}`);
      const others = [...p.byEvent].filter(([key]) => !want.some(([k]) => k === key)).map(([k, v]) => `${k} ${v}`);
      if (off.length > 0 || others.length > 0) run.notes.push(`${p.name}: event mix differs from 4 per send: ${[...off, ...others].join(', ')}`);
    }
    const log = child.output.join('').trim();
    if (log) run.notes.push(`server output (tail): ${log.slice(-600).replace(/\s+/g, ' ')}`);
    return run;
  } finally {
    await pool.close().catch(() => undefined);
    if (!stopped) await stopChild(child);
    await probe.close();
  }
}

function summarise(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([k, v]) => `${k} ${v}`).join(', ');
}

// ---------------------------------------------------------------------------------------------------------------
// Report

function report(runs: StoreRun[], options: Options): void {
  const header = ['store', 'phase', 'sends (201)', 'sends/s', 'send p99 ms', 'events', 'events/s', 'peak 1 s', 'lag p50 ms', 'lag p99 ms', 'lag max ms', 'drain after sends s', 'CPU srv/drv/other', 'verdict'];
  const rows: string[][] = [];
  for (const run of runs) {
    for (const p of run.phases) {
      const sendS = (p.sends.endMs - p.sends.startMs) / 1000;
      const sendRate = p.sends.accepted / sendS;
      const sendP99 = percentile(Float64Array.from(p.sends.latencies).sort(), 0.99);
      let verdict: string;
      if (run.problems.length > 0) verdict = 'INVALID';
      else if (p.name === 'throughput') verdict = p.eventsPerS >= targets.eventsPerS ? 'PASS' : `FAIL (<${targets.eventsPerS}/s)`;
      else {
        const misses: string[] = [];
        if (sendRate < options.rate * 0.95) misses.push(`sends/s<${options.rate}`);
        if (!(p.lag.p99 < targets.lagP99Ms)) misses.push(`p99≥${targets.lagP99Ms}ms`);
        verdict = misses.length === 0 ? 'PASS' : `FAIL (${misses.join(', ')})`;
      }
      rows.push([
        run.store,
        p.name === 'throughput' ? `throughput (burst ${options.sends})` : `lag (${options.rate}/s × ${options.durationS} s)`,
        String(p.sends.accepted),
        String(Math.round(sendRate)),
        fmt(sendP99, 1),
        String(p.arrivals.length),
        String(Math.round(p.eventsPerS)),
        String(Math.round(p.peakPerS)),
        fmt(p.lag.p50, 1),
        fmt(p.lag.p99, 1),
        fmt(p.lag.max, 0),
        fmt(p.drained.afterSendsMs / 1000, 1),
        `${fmt(p.cpu.server, 2)}/${fmt(p.cpu.driver, 2)}/${fmt(p.cpu.other, 2)}`,
        verdict,
      ]);
    }
  }
  console.log(renderTable(header, rows));
  console.log('');
  console.log('events/s: events received from the first send of the phase to the last arrival (the outbox drained then).');
  console.log('lag: arrival at the receiver − envelope date_time (written), every event of the phase. CPU: cores used by server/driver/everything else.');
  for (const run of runs) {
    for (const p of run.phases) {
      console.log(`${run.store} ${p.name}: events per second of the phase: ${p.perSecond.join(' ')}`);
      if (p.name === 'throughput' && !Number.isNaN(p.drainOnlyPerS)) console.log(`${run.store} ${p.name}: after the last send was answered: ${Math.round(p.drainOnlyPerS)} events/s`);
      if (p.name === 'lag') console.log(`${run.store} ${p.name}: p99 lag (ms) of events written in each second: ${p.lag.p99BySecond.map((v) => fmt(v, 0)).join(' ')}`);
    }
    for (const problem of run.problems) console.log(`INVALID ${run.store}: ${problem}`);
    for (const note of run.notes) console.log(`note ${run.store}: ${note}`);
  }
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  installExitHandlers();
  const options = parseArgs(process.argv.slice(2));
  const wants = (name: string) => !options.only || options.only.has(name);
  const started = Date.now();
  console.log(`Switchboard events benchmark — ${new Date().toISOString()}`);
  console.log(`node ${process.version}, ${availableParallelism()} CPUs (${cpus()[0]?.model ?? '?'}), load average ${loadAverage()}`);
  console.log(
    `throughput: burst of ${options.sends} sends (${options.concurrency} in flight); lag: ${options.rate} sends/s for ${options.durationS} s; ` +
      `warm-up ${options.warmup} sends; targets ≥ ${targets.eventsPerS} events/s, p99 lag < ${targets.lagP99Ms} ms\n`,
  );
  const receiver = new Receiver();
  await receiver.listen();
  const runs: StoreRun[] = [];
  const skipped: string[] = [];
  try {
    if (wants('sqlite')) {
      const dir = mkdtempSync(join(tmpdir(), 'sb-bench-events-'));
      receiver.reset();
      try {
        runs.push(await runStore(options, 'sqlite', receiver, sqliteProbe(join(dir, 'bench.db')), join(dir, 'data')));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    if (wants('postgres')) {
      const unreachable = await postgresUnreachable();
      if (unreachable) {
        skipped.push(`PostgreSQL not reachable at ${pgUrl} (${unreachable}): the PostgreSQL run is SKIPPED`);
        console.log(`\n*** ${skipped[skipped.length - 1]} ***\n`);
      } else {
        const database = await freshPostgresDatabase('bench_events');
        const unregister = onInterrupt(() => database.drop());
        const dir = mkdtempSync(join(tmpdir(), 'sb-bench-events-pg-'));
        receiver.reset();
        try {
          runs.push(await runStore(options, 'postgres', receiver, postgresProbe(database.uri), dir));
        } finally {
          rmSync(dir, { recursive: true, force: true });
          await database.drop().catch((error: unknown) => console.error(`could not drop database ${database.name}: ${String(error)}`));
          unregister();
        }
      }
    }
  } finally {
    await receiver.close();
  }
  console.log('');
  report(runs, options);
  for (const message of skipped) console.log(`SKIPPED: ${message}`);
  if (options.cpuProfDir) console.log(`CPU profiles written to ${options.cpuProfDir} (npx tsx bench/profile-summary.ts <file>)`);
  console.log(`load average at end ${loadAverage()}; total ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (runs.some((r) => r.problems.length > 0)) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(`benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  killAllNow();
  process.exitCode = 1;
});
