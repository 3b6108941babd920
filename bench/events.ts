// Events benchmark: webhook events delivered per second to a local receiver, and the delivery lag (arrival time minus
// the envelope's date_time) at a steady 1,000 sends/s, for SQLite and (when reachable) PostgreSQL.
//
//   npx tsx bench/events.ts                          # sqlite, then postgres; about 2 minutes
//   npx tsx bench/events.ts --only=sqlite
//   npx tsx bench/events.ts --sends=5000 --concurrency=64 --rate=1000 --duration=10 --warmup=3000 --pairs=4 --drain-timeout=25
//   npx tsx bench/events.ts --cpu-prof=/tmp/prof     # V8 CPU profile of each server (npx tsx bench/profile-summary.ts <file>)
//
// Each phase gets its own Switchboard child process (LOG_LEVEL=warn, temporary DATA_DIR) and its own fresh store, so
// a backlog left by one phase cannot slow the next. In each: --pairs pairs (default 4) of SANDBOX instances A and B,
// linked through sandbox/scan, and a webhook on each (all events) to a node:http receiver in this process that answers
// 200 at once and records each delivery's id, event, instance, date_time and arrival time. Sends go round-robin over
// the pairs. Every send A→B yields four events: send.message and messages.update (SERVER_ACK, DELIVERY_ACK) on A,
// messages.upsert on B. Each instance's events go out in order, one request after the other (its webhook lane), so
// one pair measures two lanes; more pairs measure the service as it runs with many numbers.
//   warm-up     --warmup sends (default 3000, so V8 has optimised the hot paths), drained, not measured;
//   throughput  a burst of --sends sends (--concurrency in flight); events/s from the first send until drained;
//   lag         --rate sends/s paced for --duration s (open loop, up to 256 connections), then drained; lag
//               percentiles over every event of the phase.
// Drained: no queued send and no pending webhook delivery in the store (polled read-only from here), or
// --drain-timeout s after the last send. Deliveries still pending then count in the lag with the time waited so far,
// so the lag figures become lower bounds (shown as ≥).
// Validity: after the server stops, every instance delivery in the store must have reached the receiver exactly once
// (except those still pending at a drain timeout), and nothing else may have arrived.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { Pool } from 'undici';
import {
  cpuMeter,
  fmt,
  freePort,
  freshPostgresDatabase,
  installExitHandlers,
  isRunning,
  killAllNow,
  loadAverage,
  onInterrupt,
  percentile,
  pgUrl,
  postgresUnreachable,
  renderTable,
  serverNodeFlags,
  sleep,
  startChild,
  stopChild,
  waitReady,
  type Child,
  type CpuShare,
  benchArg,
} from './lib-bench.js';

const targets = { eventsPerS: 5_000, lagP99Ms: 100 };

interface Options {
  sends: number;
  concurrency: number;
  rate: number;
  durationS: number;
  warmup: number;
  /** Sender/recipient instance pairs; sends go round-robin over the pairs. */
  pairs: number;
  drainTimeoutS: number;
  only: Set<string> | undefined;
  phases: Set<string> | undefined;
  cpuProfDir: string | undefined;
}

function parseArgs(argv: string[]): Options {
  const options: Options = {
    sends: 5_000,
    concurrency: 64,
    rate: 1_000,
    durationS: 10,
    // Long enough for V8 to optimise the hot paths, as in a service that has been running for a while.
    warmup: 3_000,
    // A gateway serves many numbers: four pairs (eight instances, eight webhook lanes) by default; --pairs=1 shows
    // the strictly ordered worst case of one sender and one recipient.
    pairs: 4,
    drainTimeoutS: 25,
    only: undefined,
    phases: undefined,
    cpuProfDir: undefined,
  };
  for (const arg of argv) {
    const { name, value, num } = benchArg(arg);
    if (name === 'sends') options.sends = Math.round(num());
    else if (name === 'concurrency') options.concurrency = Math.round(num());
    else if (name === 'rate') options.rate = num();
    else if (name === 'duration') options.durationS = num();
    else if (name === 'warmup') options.warmup = Math.round(num());
    else if (name === 'pairs') options.pairs = Math.round(num());
    else if (name === 'drain-timeout') options.drainTimeoutS = num();
    else if (name === 'only') options.only = new Set(value.split(',').map((s) => s.trim()));
    else if (name === 'phases') options.phases = new Set(value.split(',').map((s) => s.trim()));
    else if (name === 'cpu-prof') options.cpuProfDir = resolve(value || join(tmpdir(), 'switchboard-bench-prof'));
    else {
      throw new Error(
        `unknown option ${arg} (known: --sends --concurrency --rate --duration --warmup --pairs --drain-timeout --only=sqlite,postgres --phases=throughput,lag --cpu-prof=<dir>)`,
      );
    }
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

/**
 * The receiver's own thread: a real receiver is a service of its own, so its answers must not wait behind the load
 * generator's work on this thread's event loop. It answers 200 at once, then records the event; `take` hands over
 * what it recorded since the last take.
 */
const receiverThread = `
const { parentPort } = require('node:worker_threads');
const { createServer } = require('node:http');
const { performance } = require('node:perf_hooks');
let arrivals = [];
let malformed = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const arrivedMs = performance.timeOrigin + performance.now();
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const writtenMs = typeof body.date_time === 'string' ? Date.parse(body.date_time) : NaN;
      if (typeof body.id !== 'string' || Number.isNaN(writtenMs)) throw new Error('not an envelope');
      arrivals.push({ id: body.id, event: String(body.event), instance: String(body.instance), writtenMs, arrivedMs });
    } catch {
      malformed++;
    }
  });
});
server.keepAliveTimeout = 65000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ type: 'listening', port: server.address().port }));
parentPort.on('message', (message) => {
  if (message.type === 'take') {
    parentPort.postMessage({ type: 'taken', arrivals, malformed });
    arrivals = [];
    malformed = 0;
  } else if (message.type === 'close') {
    server.closeAllConnections();
    server.close(() => parentPort.postMessage({ type: 'closed' }));
  }
});
`;

class Receiver {
  readonly arrivals: Arrival[] = [];
  /** Times each event id arrived since the last reset. */
  readonly seen = new Map<string, number>();
  /** Bodies that were not an event envelope. */
  malformed = 0;
  port = 0;
  private readonly thread = new Worker(receiverThread, { eval: true });

  private next<T>(type: string): Promise<T> {
    return new Promise((resolve) => {
      const onMessage = (message: { type: string }) => {
        if (message.type !== type) return;
        this.thread.off('message', onMessage);
        resolve(message as T);
      };
      this.thread.on('message', onMessage);
    });
  }

  async listen(): Promise<void> {
    this.port = (await this.next<{ port: number }>('listening')).port;
  }

  /** Brings over what the receiver thread recorded so far. */
  async sync(): Promise<void> {
    const taken = this.next<{ arrivals: Arrival[]; malformed: number }>('taken');
    this.thread.postMessage({ type: 'take' });
    const { arrivals, malformed } = await taken;
    for (const arrival of arrivals) {
      this.arrivals.push(arrival);
      this.seen.set(arrival.id, (this.seen.get(arrival.id) ?? 0) + 1);
    }
    this.malformed += malformed;
  }

  async reset(): Promise<void> {
    await this.sync();
    this.arrivals.length = 0;
    this.seen.clear();
    this.malformed = 0;
  }

  async close(): Promise<void> {
    const closed = this.next('closed');
    this.thread.postMessage({ type: 'close' });
    await closed;
    await this.thread.terminate();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The store, read from here: is everything delivered, and what was queued

interface DeliveryRow {
  event_id: string;
  state: string;
  target: string;
  created_at: number;
}

interface StoreProbe {
  /** DATABASE_CONNECTION_URI for the server. */
  uri: string;
  dataDir: string;
  /** Sends not yet delivered by the worker, and webhook deliveries still pending. */
  backlog(): Promise<{ queued: number; pending: number }>;
  /** Every webhook delivery the store holds (`pendingOnly`: only those still pending). */
  deliveries(pendingOnly?: boolean): Promise<DeliveryRow[]>;
  /** Closes the connection of this probe and removes the store (temporary files, the database). */
  dispose(): Promise<void>;
}

const backlogSql = "select (select count(*) from send_queue) as queued, (select count(*) from deliveries where state = 'pending') as pending";
const deliveriesSql = 'select event_id, state, target, created_at from deliveries';
const pendingSql = `${deliveriesSql} where state = 'pending'`;

function sqliteStore(): StoreProbe {
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-events-'));
  const path = join(dir, 'bench.db');
  let db: SqliteDatabase.Database | undefined;
  const open = () => (db ??= new SqliteDatabase(path, { readonly: true, fileMustExist: true }));
  return {
    uri: `file:${path}`,
    dataDir: join(dir, 'data'),
    async backlog() {
      const row = open().prepare(backlogSql).get() as { queued: number; pending: number };
      return { queued: Number(row.queued), pending: Number(row.pending) };
    },
    async deliveries(pendingOnly = false) {
      return (
        open()
          .prepare(pendingOnly ? pendingSql : deliveriesSql)
          .all() as DeliveryRow[]
      ).map((r) => ({ ...r, created_at: Number(r.created_at) }));
    },
    async dispose() {
      db?.close();
      db = undefined;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresStore(): Promise<StoreProbe> {
  const database = await freshPostgresDatabase('bench_events');
  const unregister = onInterrupt(() => database.drop());
  const dir = mkdtempSync(join(tmpdir(), 'sb-bench-events-pg-'));
  let client: pg.Client | undefined;
  const open = async () => {
    if (!client) {
      client = new pg.Client({ connectionString: database.uri });
      await client.connect();
    }
    return client;
  };
  return {
    uri: database.uri,
    dataDir: dir,
    async backlog() {
      const row = (await (await open()).query(backlogSql)).rows[0] as { queued: string; pending: string };
      return { queued: Number(row.queued), pending: Number(row.pending) };
    },
    async deliveries(pendingOnly = false) {
      return ((await (await open()).query(pendingOnly ? pendingSql : deliveriesSql)).rows as DeliveryRow[]).map((r) => ({
        ...r,
        created_at: Number(r.created_at),
      }));
    },
    async dispose() {
      await client?.end().catch(() => undefined);
      client = undefined;
      rmSync(dir, { recursive: true, force: true });
      try {
        await database.drop();
      } catch (error) {
        console.error(`could not drop database ${database.name}: ${String(error)}`);
      }
      unregister();
    },
  };
}

interface DrainResult {
  drained: boolean;
  queued: number;
  pending: number;
  /** When the drain ended (drained or timed out), epoch ms. */
  atMs: number;
}

/** Waits until nothing is queued or pending, at most `timeoutMs`. */
async function drain(probe: StoreProbe, timeoutMs: number, child: Child): Promise<DrainResult> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isRunning(child)) throw new Error(`server exited:\n${child.output.join('').slice(-4000)}`);
    const { queued, pending } = await probe.backlog();
    if (queued === 0 && pending === 0) return { drained: true, queued, pending, atMs: nowMs() };
    if (Date.now() > deadline) return { drained: false, queued, pending, atMs: nowMs() };
    await sleep(100);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Sending

type Send = () => Promise<{ ok: boolean; ms: number; status: number }>;

function sender(pool: Pool, path: string, apikey: string, to: string): Send {
  const headers = { 'content-type': 'application/json', apikey };
  let n = 0;
  return async () => {
    const started = performance.now();
    try {
      const response = await pool.request({ path, method: 'POST', headers, body: JSON.stringify({ number: to, text: `bench ${++n}` }) });
      await response.body.dump();
      return { ok: response.statusCode === 201, ms: performance.now() - started, status: response.statusCode };
    } catch {
      return { ok: false, ms: performance.now() - started, status: 0 };
    }
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
async function burst(send: Send, total: number, concurrency: number): Promise<SendStats> {
  const stats = newStats();
  const worker = async () => {
    while (stats.issued < total) {
      stats.issued++;
      count(stats, await send());
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  stats.endMs = nowMs();
  return stats;
}

/** `rate` sends per second for `seconds` on a clock (open loop); at most `cap` in flight, which shows as a lower rate. */
async function paced(send: Send, rate: number, seconds: number, cap: number): Promise<SendStats> {
  const stats = newStats();
  const inFlight = new Set<Promise<void>>();
  const t0 = performance.now();
  const total = Math.round(rate * seconds);
  while (stats.issued < total) {
    const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate));
    while (stats.issued < due && inFlight.size < cap) {
      stats.issued++;
      const p: Promise<void> = send().then((r) => {
        count(stats, r);
        inFlight.delete(p);
      });
      inFlight.add(p);
    }
    await sleep(1);
  }
  await Promise.all(inFlight);
  stats.endMs = nowMs();
  return stats;
}

// ---------------------------------------------------------------------------------------------------------------
// One phase on a fresh server and store

type PhaseName = 'throughput' | 'lag';

interface PhaseResult {
  store: string;
  phase: PhaseName;
  sends: SendStats;
  arrivals: Arrival[];
  drain: DrainResult;
  cpu: CpuShare | undefined;
  eventsPerS: number;
  /** Events/s after the last send was answered, while the outbox drained (NaN when that took under 1 s). */
  afterSendsPerS: number;
  peakPerS: number;
  perSecond: number[];
  lag: { p50: number; p99: number; max: number; lowerBound: boolean; p99BySecond: number[] };
  byEvent: Map<string, number>;
  problems: string[];
  notes: string[];
}

function analyse(result: PhaseResult, censoredLags: number[]): void {
  const { sends, arrivals } = result;
  const t0 = sends.startMs;
  const last = arrivals.length > 0 ? arrivals[arrivals.length - 1].arrivedMs : t0;
  result.eventsPerS = arrivals.length / Math.max(1e-3, (last - t0) / 1000);
  const drainS = (last - sends.endMs) / 1000;
  result.afterSendsPerS = drainS >= 1 ? arrivals.filter((a) => a.arrivedMs > sends.endMs).length / drainS : Number.NaN;
  for (const a of arrivals) {
    const second = Math.floor((a.arrivedMs - t0) / 1000);
    while (result.perSecond.length <= second) result.perSecond.push(0);
    result.perSecond[second]++;
  }
  // Whole seconds only (the last one is partial).
  result.peakPerS = result.perSecond.length > 1 ? Math.max(...result.perSecond.slice(0, -1)) : result.eventsPerS;
  const lags = Float64Array.from([...arrivals.map((a) => a.arrivedMs - a.writtenMs), ...censoredLags]).sort();
  const bySecond: number[][] = [];
  for (const a of arrivals) {
    const second = Math.max(0, Math.floor((a.writtenMs - t0) / 1000));
    bySecond[second] ??= [];
    bySecond[second].push(a.arrivedMs - a.writtenMs);
  }
  result.lag = {
    p50: percentile(lags, 0.5),
    p99: percentile(lags, 0.99),
    max: lags.length ? lags[lags.length - 1] : Number.NaN,
    lowerBound: censoredLags.length > 0,
    p99BySecond: Array.from(bySecond, (l) => (l ? percentile(Float64Array.from(l).sort(), 0.99) : Number.NaN)),
  };
  for (const a of arrivals) {
    const key = `${a.event}@${a.instance}`;
    result.byEvent.set(key, (result.byEvent.get(key) ?? 0) + 1);
  }
}

async function runPhase(options: Options, store: string, phase: PhaseName, receiver: Receiver, probe: StoreProbe): Promise<PhaseResult> {
  const port = await freePort();
  const globalKey = `bench-${randomBytes(12).toString('hex')}`;
  const base = `http://127.0.0.1:${port}`;
  const nodeFlags = [
    ...serverNodeFlags,
    ...(options.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${join(options.cpuProfDir, `events-${store}-${phase}-${Date.now()}`)}`] : []),
  ];
  const child = startChild(
    `switchboard ${store} (${phase})`,
    'src/main.ts',
    {
      AUTHENTICATION_API_KEY: globalKey,
      // The bench drives instance keys far past RATE_LIMIT_MAX: it measures the service, not its rate limit.
      RATE_LIMIT_ENABLED: 'false',
      SERVER_PORT: String(port),
      SERVER_HOST: '127.0.0.1',
      SERVER_URL: base,
      DATA_DIR: probe.dataDir,
      DATABASE_CONNECTION_URI: probe.uri,
      LOG_LEVEL: 'warn',
      // The receiver is on loopback; only the instance webhooks are measured.
      OUTBOUND_DENY_PRIVATE: 'false',
      WEBHOOK_GLOBAL_ENABLED: 'false',
    },
    nodeFlags,
  );
  // The lag phase is open loop: enough connections that the client never holds back a send the server would take.
  const pool = new Pool(base, { connections: phase === 'throughput' ? options.concurrency : 256, pipelining: 1 });
  const result: PhaseResult = {
    store,
    phase,
    sends: newStats(),
    arrivals: [],
    drain: { drained: false, queued: 0, pending: 0, atMs: 0 },
    cpu: undefined,
    eventsPerS: Number.NaN,
    afterSendsPerS: Number.NaN,
    peakPerS: Number.NaN,
    perSecond: [],
    lag: { p50: Number.NaN, p99: Number.NaN, max: Number.NaN, lowerBound: false, p99BySecond: [] },
    byEvent: new Map(),
    problems: [],
    notes: [],
  };
  await receiver.reset();
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
      const answer = { status: response.status, body: (await response.json()) as any };
      if (answer.status >= 300) throw new Error(`${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
      return answer;
    };
    // Pair i: bench-a<i> sends to bench-b<i> (bench-a / bench-b when there is one pair).
    const suffix = (i: number) => (options.pairs === 1 ? '' : String(i + 1));
    const parties = Array.from({ length: options.pairs }, (_, i) => [
      { name: `bench-a${suffix(i)}`, number: `55119${String(2 * i + 1).padStart(8, '0')}` },
      { name: `bench-b${suffix(i)}`, number: `55119${String(2 * i + 2).padStart(8, '0')}` },
    ]).flat();
    const keys: string[] = [];
    for (const party of parties) {
      const created = await api('instance/create', globalKey, { instanceName: party.name, integration: 'SANDBOX', qrcode: true });
      await api('sandbox/scan', globalKey, { code: created.body.qrcode.code, number: party.number });
      keys.push(created.body.hash.apikey as string);
    }
    for (const [i, party] of parties.entries()) {
      await api(`webhook/set/${party.name}`, keys[i], { webhook: { enabled: true, url: `http://127.0.0.1:${receiver.port}/hook/${store}`, events: [] } });
    }
    const senders = Array.from({ length: options.pairs }, (_, i) =>
      sender(pool, `/messenger/message/sendText/${parties[2 * i].name}`, keys[2 * i], parties[2 * i + 1].number),
    );
    let turn = 0;
    const send: Send = () => senders[turn++ % senders.length]();
    const drainTimeoutMs = options.drainTimeoutS * 1000;

    process.stdout.write(`  ${store} ${phase}: warm-up ${options.warmup} sends … `);
    const warm = await burst(send, options.warmup, 16);
    const warmDrain = await drain(probe, 60_000, child);
    for (const [status, n] of warm.failures) result.problems.push(`warm-up: ${n} sends answered ${status || 'error'}`);
    if (!warmDrain.drained) throw new Error(`the warm-up did not drain within 60 s (${warmDrain.queued} queued, ${warmDrain.pending} pending)`);
    await receiver.sync();
    process.stdout.write(`${receiver.arrivals.length} events (${(receiver.arrivals.length / Math.max(1, warm.accepted)).toFixed(2)} per send); `);

    const from = receiver.arrivals.length;
    const meter = cpuMeter(child.proc.pid);
    if (phase === 'throughput') {
      process.stdout.write(`burst of ${options.sends} sends, ${options.concurrency} in flight … `);
      result.sends = await burst(send, options.sends, options.concurrency);
    } else {
      process.stdout.write(`${options.rate} sends/s for ${options.durationS} s … `);
      result.sends = await paced(send, options.rate, options.durationS, 1024);
    }
    result.drain = await drain(probe, drainTimeoutMs, child);
    result.cpu = meter();
    await receiver.sync();
    result.arrivals = receiver.arrivals.slice(from);
    // Still pending at a timeout: they have waited at least this long (a lower bound of their lag).
    const censored = result.drain.drained
      ? []
      : (await probe.deliveries(true)).filter((r) => r.target === 'instance').map((r) => result.drain.atMs - r.created_at);
    analyse(result, censored);
    process.stdout.write(
      `${result.arrivals.length} events, ${Math.round(result.eventsPerS)} events/s, p99 lag ${result.lag.lowerBound ? '≥' : ''}${fmt(result.lag.p99)} ms` +
        `${result.drain.drained ? '' : ` (NOT drained after ${options.drainTimeoutS} s: ${result.drain.pending} deliveries pending, ${result.drain.queued} sends queued)`}\n`,
    );

    await stopChild(child);
    stopped = true;
    if (child.proc.exitCode !== 0) result.notes.push(`server exit code ${child.proc.exitCode ?? child.proc.signalCode}`);
    await receiver.sync();
    validate(result, await probe.deliveries(), receiver);
    const log = child.output.join('').trim();
    if (log) result.notes.push(`server output (tail): ${log.slice(-600).replace(/\s+/g, ' ')}`);
    return result;
  } finally {
    await pool.close().catch(() => undefined);
    if (!stopped) await stopChild(child);
  }
}

/** Every instance delivery in the store reached the receiver exactly once, unless still pending; nothing else came. */
function validate(result: PhaseResult, rows: DeliveryRow[], receiver: Receiver): void {
  const expected = new Map(rows.filter((r) => r.target === 'instance').map((r) => [r.event_id, r.state]));
  const states = new Map<string, number>();
  for (const state of expected.values()) states.set(state, (states.get(state) ?? 0) + 1);
  const lost = [...expected].filter(([id, state]) => state !== 'pending' && !receiver.seen.has(id));
  const undelivered = [...expected].filter(([id, state]) => state === 'pending' && !receiver.seen.has(id)).length;
  const duplicates = [...receiver.seen].filter(([, n]) => n > 1);
  const unexpected = [...receiver.seen.keys()].filter((id) => !expected.has(id));
  result.notes.push(
    `store: ${expected.size} instance deliveries (${[...states].map(([k, v]) => `${k} ${v}`).join(', ')}), warm-up included; ` +
      `receiver: ${receiver.seen.size} distinct events in ${receiver.arrivals.length} deliveries` +
      (undelivered > 0 ? `; ${undelivered} still pending when the server stopped (not drained)` : ''),
  );
  if (lost.length > 0) {
    const byState = new Map<string, number>();
    for (const [, state] of lost) byState.set(state, (byState.get(state) ?? 0) + 1);
    result.problems.push(`${lost.length} events marked ${[...byState].map(([k, v]) => `${k} ×${v}`).join(', ')} in the store never reached the receiver`);
  }
  if (duplicates.length > 0)
    result.problems.push(`${duplicates.length} events received more than once (${duplicates.reduce((n, [, c]) => n + c - 1, 0)} extra deliveries)`);
  if (unexpected.length > 0) result.problems.push(`${unexpected.length} received events have no delivery in the store`);
  if (receiver.malformed > 0) result.problems.push(`${receiver.malformed} received bodies were not event envelopes`);
  const failures = [...result.sends.failures].map(([status, n]) => `${status || 'connection error'} ×${n}`).join(', ');
  if (failures) result.problems.push(`sends not accepted: ${failures}`);
  if (result.drain.drained) {
    // Each accepted send: send.message, messages.update ×2 on A; messages.upsert on B.
    const n = result.sends.accepted;
    const want: [string, number][] = [
      ['send.message@bench-a', n],
      ['messages.update@bench-a', 2 * n],
      ['messages.upsert@bench-b', n],
    ];
    // Summed over the pairs: bench-a1, bench-a2, … count as bench-a.
    const bySide = new Map<string, number>();
    for (const [key, count] of result.byEvent) {
      const side = key.replace(/@(bench-[ab])\d*$/, '@$1');
      bySide.set(side, (bySide.get(side) ?? 0) + count);
    }
    const off = want.filter(([key, w]) => (bySide.get(key) ?? 0) !== w).map(([key, w]) => `${key} ${bySide.get(key) ?? 0}/${w}`);
    const others = [...bySide].filter(([key]) => !want.some(([k]) => k === key)).map(([k, v]) => `${k} ${v}`);
    if (off.length > 0 || others.length > 0) result.notes.push(`event mix differs from 4 per send: ${[...off, ...others].join(', ')}`);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Report

function verdict(r: PhaseResult, options: Options): string {
  if (r.problems.length > 0) return 'INVALID';
  const misses: string[] = [];
  if (r.phase === 'throughput') {
    if (!(r.eventsPerS >= targets.eventsPerS)) misses.push(`<${targets.eventsPerS}/s`);
  } else {
    const sendRate = r.sends.accepted / ((r.sends.endMs - r.sends.startMs) / 1000);
    if (sendRate < options.rate * 0.95) misses.push(`sends/s<${options.rate}`);
    if (!(r.lag.p99 < targets.lagP99Ms)) misses.push(`p99≥${targets.lagP99Ms}ms`);
  }
  if (!r.drain.drained) misses.push('not drained');
  return misses.length === 0 ? 'PASS' : `FAIL (${misses.join(', ')})`;
}

function report(results: PhaseResult[], options: Options): void {
  const header = [
    'store',
    'phase',
    'sends (201)',
    'sends/s',
    'send p99 ms',
    'events',
    'events/s',
    'peak 1 s',
    'lag p50 ms',
    'lag p99 ms',
    'lag max ms',
    'drained',
    'CPU srv/drv/other',
    'verdict',
  ];
  const rows = results.map((r) => {
    const sendRate = r.sends.accepted / ((r.sends.endMs - r.sends.startMs) / 1000);
    const bound = r.lag.lowerBound ? '≥' : '';
    const last = r.arrivals.length ? r.arrivals[r.arrivals.length - 1].arrivedMs : r.sends.endMs;
    return [
      r.store,
      r.phase === 'throughput' ? `throughput (burst ${options.sends})` : `lag (${options.rate}/s × ${options.durationS} s)`,
      String(r.sends.accepted),
      String(Math.round(sendRate)),
      fmt(percentile(Float64Array.from(r.sends.latencies).sort(), 0.99), 1),
      String(r.arrivals.length),
      String(Math.round(r.eventsPerS)),
      String(Math.round(r.peakPerS)),
      `${bound}${fmt(r.lag.p50, 1)}`,
      `${bound}${fmt(r.lag.p99, 1)}`,
      `${bound}${fmt(r.lag.max, 0)}`,
      r.drain.drained ? `${fmt((last - r.sends.endMs) / 1000, 1)} s after sends` : `no (${r.drain.pending} pending)`,
      r.cpu ? `${fmt(r.cpu.server, 2)}/${fmt(r.cpu.driver, 2)}/${fmt(r.cpu.other, 2)}` : '–',
      verdict(r, options),
    ];
  });
  console.log(renderTable(header, rows));
  console.log('');
  console.log('events/s: events received from the first send of the phase to the last arrival. peak 1 s: best whole second.');
  console.log('lag: arrival at the receiver − envelope date_time, over every event of the phase; ≥: some were still pending at the');
  console.log(`drain timeout (${options.drainTimeoutS} s) and count with the time waited so far. CPU: cores used by server/driver/everything else.`);
  for (const r of results) {
    const name = `${r.store} ${r.phase}`;
    console.log(`${name}: events per second of the phase: ${r.perSecond.join(' ')}`);
    if (!Number.isNaN(r.afterSendsPerS)) console.log(`${name}: after the last send was answered: ${Math.round(r.afterSendsPerS)} events/s`);
    console.log(`${name}: p99 lag (ms) of the events written in each second: ${r.lag.p99BySecond.map((v) => fmt(v, 0)).join(' ')}`);
    for (const problem of r.problems) console.log(`INVALID ${name}: ${problem}`);
    for (const note of r.notes) console.log(`note ${name}: ${note}`);
  }
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  installExitHandlers();
  const options = parseArgs(process.argv.slice(2));
  const wants = (name: string) => !options.only || options.only.has(name);
  const phases = (['throughput', 'lag'] as const).filter((p) => !options.phases || options.phases.has(p));
  const started = Date.now();
  console.log(`Switchboard events benchmark — ${new Date().toISOString()}`);
  console.log(`node ${process.version}, ${availableParallelism()} CPUs (${cpus()[0]?.model ?? '?'}), load average ${loadAverage()}`);
  console.log(
    `throughput: burst of ${options.sends} sends (${options.concurrency} in flight); lag: ${options.rate} sends/s for ${options.durationS} s; ` +
      `${options.pairs} instance pair${options.pairs === 1 ? '' : 's'} (a webhook lane per instance); warm-up ${options.warmup} sends; drain timeout ${options.drainTimeoutS} s; targets ≥ ${targets.eventsPerS} events/s, p99 lag < ${targets.lagP99Ms} ms\n`,
  );
  const receiver = new Receiver();
  await receiver.listen();
  const results: PhaseResult[] = [];
  const skipped: string[] = [];
  try {
    const stores: [string, () => Promise<StoreProbe>][] = [];
    if (wants('sqlite')) stores.push(['sqlite', async () => sqliteStore()]);
    if (wants('postgres')) {
      const unreachable = await postgresUnreachable();
      if (unreachable) {
        skipped.push(`PostgreSQL not reachable at ${pgUrl} (${unreachable}): the PostgreSQL runs are SKIPPED`);
        console.log(`*** ${skipped[skipped.length - 1]} ***\n`);
      } else stores.push(['postgres', postgresStore]);
    }
    for (const [store, open] of stores) {
      for (const phase of phases) {
        const probe = await open();
        try {
          results.push(await runPhase(options, store, phase, receiver, probe));
        } finally {
          await probe.dispose();
        }
      }
    }
  } finally {
    await receiver.close();
  }
  console.log('');
  report(results, options);
  for (const message of skipped) console.log(`SKIPPED: ${message}`);
  if (options.cpuProfDir) console.log(`CPU profiles written to ${options.cpuProfDir} (npx tsx bench/profile-summary.ts <file>)`);
  console.log(`load average at end ${loadAverage()}; total ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (results.some((r) => r.problems.length > 0)) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(`benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  killAllNow();
  process.exitCode = 1;
});
