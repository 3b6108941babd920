// Shared pieces of the fleet benchmarks: nodes of one fleet as child processes on one database, the API, sandbox
// instances, who owns what, and load from `hey` (Debian: `apt-get install hey`) in a process of its own.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { copySandboxInstance } from '../test/support/sandbox-copies.js';
import {
  benchArg,
  freePort,
  freshPostgresDatabase,
  installExitHandlers,
  isRunning,
  onInterrupt,
  postgresUnreachable,
  root,
  serverNodeFlags,
  startChild,
  waitReady,
  type Child,
} from './lib-bench.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
type Json = any;

export interface BenchNode {
  index: number;
  nodeId: string;
  base: string;
  env: Record<string, string>;
  child: Child | undefined;
  dataDir: string;
}

export interface BenchFleet {
  key: string;
  secretsKey: string;
  uri: string;
  /** Settings every node gets (besides the keys and the store). */
  shared: Record<string, string>;
  nodes: BenchNode[];
}

/**
 * A fleet benchmark's arguments: `--name=<n>` for each number in `defaults` (positive), `--name` for each boolean (on);
 * any other is an error that lists `usage`.
 */
export function fleetBenchArgs<T extends Record<string, number | boolean>>(defaults: T, usage: string): T {
  const args: Record<string, number | boolean> = { ...defaults };
  for (const arg of process.argv.slice(2)) {
    const parsed = benchArg(arg);
    const fallback: unknown = Object.hasOwn(defaults, parsed.name) ? defaults[parsed.name] : undefined;
    if (typeof fallback === 'number') args[parsed.name] = parsed.num();
    else if (typeof fallback === 'boolean') args[parsed.name] = true;
    else throw new Error(`unknown argument ${arg} (${usage})`);
  }
  return args as T;
}

/** What every fleet benchmark needs first: its exit handlers, PostgreSQL reachable, and hey when it loads with hey. */
export async function fleetBenchReady({ hey }: { hey: boolean }): Promise<void> {
  installExitHandlers();
  const missing = hey ? heyMissing() : undefined;
  if (missing) throw new Error(missing);
  // Nodes run the compiled service, as `npm start` and the Dockerfile do (BENCH_SOURCE=1: the sources through tsx).
  if (!runsSource && spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: root, stdio: 'inherit' }).status !== 0) {
    throw new Error('the service could not be built (npm run build)');
  }
  const unreachable = await postgresUnreachable();
  if (unreachable) throw new Error(`PostgreSQL unreachable: ${unreachable}`);
}

/**
 * Runs `body` with a fleet (no node yet) on a fresh PostgreSQL database, its sandbox instances linked at creation;
 * afterwards every node gets `stopWith`, their data folders are removed and the database dropped (also on an interrupt).
 */
export async function withBenchFleet<T>(stopWith: 'SIGKILL' | 'SIGTERM', body: (fleet: BenchFleet) => Promise<T>): Promise<T> {
  const database = await freshPostgresDatabase('bench_fleet');
  const forget = onInterrupt(() => database.drop());
  const fleet = benchFleet(database.uri, { SANDBOX_AUTO_LINK: 'true' });
  try {
    return await body(fleet);
  } finally {
    for (const node of fleet.nodes) await stopNode(node, stopWith);
    removeNodeData(fleet);
    await database.drop();
    forget();
  }
}

/** A fleet on the database at `uri`: one global key and secrets key for every node, and `shared` settings. */
function benchFleet(uri: string, shared: Record<string, string> = {}): BenchFleet {
  return { key: `bench-${randomBytes(8).toString('hex')}`, secretsKey: randomBytes(32).toString('base64'), uri, shared, nodes: [] };
}

/** Adds node `nodes.length` to the fleet (not started): own port, data folder, NODE_ID and NODE_ADDRESS. */
export async function addNode(fleet: BenchFleet, extra: Record<string, string> = {}): Promise<BenchNode> {
  const index = fleet.nodes.length;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), `sb-bench-fleet-${index + 1}-`));
  const node: BenchNode = {
    index,
    nodeId: `bench-node-${index + 1}`,
    base,
    dataDir,
    child: undefined,
    env: {
      AUTHENTICATION_API_KEY: fleet.key,
      SECRETS_KEY: fleet.secretsKey,
      DATABASE_CONNECTION_URI: fleet.uri,
      DATA_DIR: dataDir,
      SERVER_PORT: String(port),
      SERVER_HOST: '127.0.0.1',
      SERVER_URL: base,
      NODE_ID: `bench-node-${index + 1}`,
      NODE_ADDRESS: base,
      LOG_LEVEL: 'warn',
      NODE_HEARTBEAT_INTERVAL_MS: '500',
      NODE_DEAD_AFTER_MS: '3000',
      ...fleet.shared,
      ...extra,
    },
  };
  fleet.nodes.push(node);
  return node;
}

/** Whether nodes run the sources through tsx (BENCH_SOURCE=1) instead of the compiled service. */
const runsSource = process.env.BENCH_SOURCE === '1';

/** Starts node `node` (the compiled service) and answers the milliseconds until GET /health answers 200. */
export async function startNode(node: BenchNode, timeoutMs = 180_000): Promise<number> {
  const startedAt = Date.now();
  node.child = startChild(node.nodeId, runsSource ? 'src/main.ts' : 'dist/src/main.js', node.env, serverNodeFlags);
  await waitReady(
    node.child,
    async () => (await fetch(`${node.base}/health`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined))?.status === 200,
    timeoutMs,
  );
  return Date.now() - startedAt;
}

/** SIGKILL or SIGTERM to a node; resolves once it exited. */
export async function stopNode(node: BenchNode, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
  const child = node.child;
  if (!child || !isRunning(child)) return;
  child.proc.kill(signal);
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), 30_000);
  await child.exited;
  clearTimeout(timer);
}

function removeNodeData(fleet: BenchFleet): void {
  for (const node of fleet.nodes) rmSync(node.dataDir, { recursive: true, force: true });
}

export async function api(
  node: BenchNode,
  key: string,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 30_000,
): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${node.base}/messenger/${path}`, {
    method,
    headers: { apikey: key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/**
 * Creates `count` SANDBOX instances through `node` (the node must run with SANDBOX_AUTO_LINK=true, so each is linked at
 * creation), `concurrency` at a time; answers their names.
 */
export async function createSandboxes(node: BenchNode, key: string, prefix: string, count: number, concurrency = 16): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `${prefix}${i}`);
  let next = 0;
  let done = 0;
  const startedAt = Date.now();
  const worker = async () => {
    while (next < names.length) {
      const i = next++;
      const number = `49170${String(i).padStart(7, '0')}`;
      const created = await api(node, key, 'POST', 'instance/create', { instanceName: names[i], integration: 'SANDBOX', number }, 120_000).catch(
        async (error: Error) => {
          // No answer in time (a loaded machine): the create may have gone through; it did when the name is taken.
          const listed = await api(node, key, 'GET', `instance/fetchInstances?instanceName=${names[i]}`, undefined, 120_000);
          if (listed.status === 200 && Array.isArray(listed.body) && listed.body.length === 1) return { status: 201, body: null };
          throw error;
        },
      );
      if (created.status !== 201) throw new Error(`create ${names[i]}: ${created.status} ${JSON.stringify(created.body)}`);
      done += 1;
      if (done % 1000 === 0) console.log(`  ${done} of ${count} created (${Math.round((Date.now() - startedAt) / 1000)} s)`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return names;
}

/**
 * `count` linked SANDBOX instances on the fleet's database, fast: one created through `node` (running with
 * SANDBOX_AUTO_LINK=true), then copied in SQL with fresh ids, names, keys and numbers (see test/support/sandbox-copies.ts).
 * The node is stopped (SIGTERM) before the copies are written: it reads them when started again. The database is
 * analyzed after (as autovacuum would have by the time a store holds that many). Answers their names.
 */
export async function seedSandboxes(fleet: BenchFleet, node: BenchNode, prefix: string, count: number): Promise<string[]> {
  const templateNumber = '4917000000000';
  const created = await api(node, fleet.key, 'POST', 'instance/create', { instanceName: `${prefix}0`, integration: 'SANDBOX', number: templateNumber });
  if (created.status !== 201) throw new Error(`create ${prefix}0: ${created.status} ${JSON.stringify(created.body)}`);
  await stopNode(node, 'SIGTERM');
  const client = new pg.Client({ connectionString: fleet.uri });
  await client.connect();
  try {
    const run = async (sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as Record<string, unknown>[];
    const copies = await copySandboxInstance(run, {
      templateId: created.body.instance.instanceId as string,
      templateNumber,
      prefix,
      numberPrefix: '49171',
      count: count - 1,
      secretsKey: fleet.secretsKey,
      start: 1,
    });
    // A store that grew to this many instances over time has its planner statistics (autovacuum analyzes as it goes);
    // these rows came in one go a moment ago.
    await client.query('analyze');
    return [`${prefix}0`, ...copies];
  } finally {
    await client.end();
  }
}

/**
 * Polls GET /health until the node owns `count` instances and has none left to open, then until it lists `count` open.
 * Answers when /health first said so (epoch ms).
 */
export async function waitAllOpen(node: BenchNode, key: string, count: number, timeoutMs = 600_000): Promise<number> {
  const startedAt = Date.now();
  for (;;) {
    const health = await fetch(`${node.base}/health`, { signal: AbortSignal.timeout(5000) })
      .then((r) => r.json() as Promise<Json>)
      .catch(() => undefined);
    // Every one owned here (a node that lost its heartbeat under load gives them up, and takes them again) and started.
    if (health?.instances?.opening === 0 && health.instances.owned === count) break;
    if (Date.now() - startedAt > timeoutMs) throw new Error(`still opening after ${timeoutMs} ms: ${JSON.stringify(health)}`);
    // Often enough that the poll adds little to the time measured (a look at /health costs the node well under 1 ms).
    await new Promise((r) => setTimeout(r, 25));
  }
  const openedAt = Date.now();
  for (let open = 0; open < count; ) {
    open = await openCount(node, key).catch(() => -1);
    if (Date.now() - startedAt > timeoutMs) throw new Error(`only ${open} of ${count} open after ${timeoutMs} ms`);
    if (open < count) await new Promise((r) => setTimeout(r, 250));
  }
  return openedAt;
}

/** How many of the instances `node` lists are `open` (one GET /instance/fetchInstances). */
export async function openCount(node: BenchNode, key: string): Promise<number> {
  const listed = await api(node, key, 'GET', 'instance/fetchInstances', undefined, 60_000);
  if (listed.status !== 200) return -1;
  return (listed.body as Json[]).filter((entry) => (entry.connectionStatus ?? entry.instance?.status) === 'open').length;
}

/** Each instance's owner node (index by NODE_ID, -1 for none or an unknown incarnation), from `instance_owners`. */
export async function owners(fleet: BenchFleet): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: fleet.uri });
  await client.connect();
  try {
    const rows = (
      await client.query(
        'select i.name, n.node_id from instance_owners o join instances i on i.id = o.instance_id left join nodes n on n.incarnation = o.owner and n.stopped_at is null',
      )
    ).rows as { name: string; node_id: string | null }[];
    const indexOf = new Map(fleet.nodes.map((node) => [node.nodeId, node.index]));
    return new Map(rows.map((row) => [row.name, row.node_id === null ? -1 : (indexOf.get(row.node_id) ?? -1)]));
  } finally {
    await client.end();
  }
}

/** Resident memory of a process in MB (Linux /proc), or NaN. */
/** Sends accepted and still queued in the fleet's database (the send workers have not sent them yet). */
export async function queuedSends(uri: string): Promise<number> {
  const client = new pg.Client({ connectionString: uri });
  await client.connect();
  try {
    return Number((await client.query('select count(*)::int as n from send_queue')).rows[0].n);
  } finally {
    await client.end();
  }
}

/** Waits until every accepted send is sent (at most `timeoutMs`): a run then starts on a node with no backlog. */
export async function drainedSends(uri: string, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await queuedSends(uri)) > 0) {
    if (Date.now() > deadline) throw new Error(`sends still queued after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export function rssMb(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]);
    return kb / 1024;
  } catch {
    return Number.NaN;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// hey

export interface HeyResult {
  requestsPerS: number;
  totalS: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers by status code. */
  statuses: Record<string, number>;
  errors: number;
}

/** undefined when hey can be run, else what to do about it. */
export function heyMissing(): string | undefined {
  return spawnSync('hey', ['-n', '0'], { encoding: 'utf8' }).error ? 'hey is not installed (Debian/Ubuntu: apt-get install hey)' : undefined;
}

export interface HeyLoad {
  url: string;
  headers: Record<string, string>;
  body: string;
  seconds: number;
  /** Workers (concurrent connections). */
  workers: number;
  /** Requests per second of each worker (hey -q); 0 for as fast as answered. */
  perWorkerRate?: number;
}

/** Runs hey (POST) in a process of its own and reads its summary. */
export async function runHey(load: HeyLoad): Promise<HeyResult> {
  const args = ['-z', `${load.seconds}s`, '-c', String(load.workers), '-m', 'POST', '-T', 'application/json', '-d', load.body, '-t', '20'];
  if (load.perWorkerRate) args.push('-q', String(load.perWorkerRate));
  for (const [name, value] of Object.entries(load.headers)) args.push('-H', `${name}: ${value}`);
  args.push(load.url);
  const proc = spawn('hey', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  proc.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const code = await new Promise<number | null>((done) => proc.once('exit', done));
  if (code !== 0) throw new Error(`hey failed (exit ${code}): ${out.slice(-500)}`);
  const number = (pattern: RegExp) => Number(pattern.exec(out)?.[1] ?? Number.NaN);
  const statuses: Record<string, number> = {};
  for (const match of out.matchAll(/\[(\d{3})\]\s+(\d+) responses/g)) statuses[match[1]] = Number(match[2]);
  const errorSection = /Error distribution:\n([\s\S]*)$/.exec(out)?.[1] ?? '';
  const errors = [...errorSection.matchAll(/\[(\d+)\]/g)].reduce((sum, match) => sum + Number(match[1]), 0);
  return {
    requestsPerS: number(/Requests\/sec:\s+([\d.]+)/),
    totalS: number(/Total:\s+([\d.]+) secs/),
    p50Ms: number(/50% in ([\d.]+) secs/) * 1000,
    p99Ms: number(/99% in ([\d.]+) secs/) * 1000,
    statuses,
    errors,
  };
}
