// Shared helpers of the benchmarks in bench/: child processes, free ports, CPU accounting from /proc, percentiles,
// throwaway PostgreSQL databases and plain-text tables. Used by bench/events.ts; bench/sends.ts has its own copies.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// ---------------------------------------------------------------------------------------------------------------
// Child processes

export interface Child {
  name: string;
  proc: ChildProcess;
  /** The last chunks of its stdout and stderr. */
  output: string[];
  exited: Promise<number | null>;
}

const children = new Set<Child>();

/** Starts `node [flags] --import tsx <script>` in the project root with NODE_ENV=production plus `env`. */
export function startChild(name: string, script: string, env: Record<string, string>, nodeFlags: string[] = []): Child {
  const proc = spawn(process.execPath, [...nodeFlags, ...(script.endsWith('.js') ? [] : ['--import', 'tsx']), script], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString('utf8'));
    if (output.length > 200) output.shift();
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<number | null>((done) => proc.once('exit', (code) => done(code)));
  const child = { name, proc, output, exited };
  children.add(child);
  void exited.then(() => children.delete(child));
  return child;
}

export function isRunning(child: Child): boolean {
  return child.proc.exitCode === null && child.proc.signalCode === null;
}

/** SIGTERM (graceful: the server writes its CPU profile and closes the store), SIGKILL after a grace period. */
export async function stopChild(child: Child, graceMs = 15_000): Promise<void> {
  if (!isRunning(child)) return;
  child.proc.kill('SIGTERM');
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}

export function killAllNow(): void {
  for (const child of children) if (isRunning(child)) child.proc.kill('SIGKILL');
}

const cleanups: (() => Promise<void>)[] = [];

/** Work to do when the benchmark is interrupted (Ctrl-C): e.g. dropping a database. Returns the unregister function. */
export function onInterrupt(cleanup: () => Promise<void>): () => void {
  cleanups.push(cleanup);
  return () => {
    const at = cleanups.indexOf(cleanup);
    if (at >= 0) cleanups.splice(at, 1);
  };
}

let handlersInstalled = false;

/** Children are killed when the driver exits; on SIGINT/SIGTERM the registered cleanups run first (5 s at most). */
export function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', killAllNow);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      process.stderr.write(`\n${signal}: stopping the servers\n`);
      killAllNow();
      const timeout = new Promise((done) => setTimeout(done, 5_000).unref());
      void Promise.race([Promise.allSettled(cleanups.map((c) => c())), timeout]).finally(() => process.exit(130));
    });
  }
}

export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => done(port));
    });
  });
}

export async function waitReady(child: Child, probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isRunning(child)) throw new Error(`${child.name} exited during start-up:\n${child.output.join('').slice(-4000)}`);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${child.name} did not answer within ${timeoutMs} ms:\n${child.output.join('').slice(-4000)}`);
    // Often enough that a start time measured by it is off by 25 ms at most.
    await sleep(25);
  }
}

export const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

// ---------------------------------------------------------------------------------------------------------------
// CPU accounting (Linux /proc; undefined elsewhere): who used the cores during a window.

const clockTicks = 100;

function machineCpu(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = fields[3] + (fields[4] ?? 0);
    return { busy: fields.reduce((a, b) => a + b, 0) - idle, total: fields.reduce((a, b) => a + b, 0) };
  } catch {
    return undefined;
  }
}

function pidCpuTicks(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  } catch {
    return undefined;
  }
}

/** Cores used on average: by the server process, by this driver, and by everything else on the machine. */
export interface CpuShare {
  server: number | undefined;
  driver: number;
  other: number | undefined;
  /** Bytes the server process caused to be written to storage (SQLite file and WAL; PostgreSQL writes in its own processes). */
  serverWriteBytes: number | undefined;
}

function pidWriteBytes(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /^write_bytes:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Starts a window; the returned function ends it. */
export function cpuMeter(pid: number | undefined): () => CpuShare {
  const cores = availableParallelism();
  const wall0 = process.hrtime.bigint();
  const machine0 = machineCpu();
  const server0 = pidCpuTicks(pid);
  const written0 = pidWriteBytes(pid);
  const driver0 = process.cpuUsage();
  return () => {
    const wallS = Number(process.hrtime.bigint() - wall0) / 1e9;
    const machine1 = machineCpu();
    const server1 = pidCpuTicks(pid);
    const written1 = pidWriteBytes(pid);
    const d = process.cpuUsage(driver0);
    const driver = (d.user + d.system) / 1e6 / wallS;
    const server = server0 !== undefined && server1 !== undefined ? (server1 - server0) / clockTicks / wallS : undefined;
    let other: number | undefined;
    if (machine0 && machine1 && machine1.total > machine0.total) {
      const busyCores = ((machine1.busy - machine0.busy) / (machine1.total - machine0.total)) * cores;
      other = Math.max(0, busyCores - driver - (server ?? 0));
    }
    const serverWriteBytes = written0 !== undefined && written1 !== undefined ? written1 - written0 : undefined;
    return { server, driver, other, serverWriteBytes };
  };
}

export function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

// ---------------------------------------------------------------------------------------------------------------
// Numbers and tables

/** Nearest-rank percentile of an ascending array (NaN when empty). */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export const fmt = (n: number | undefined, digits = 1) => (n === undefined || Number.isNaN(n) ? '–' : n.toFixed(digits));

/** A Markdown table with padded columns. */
export function renderTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const render = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [render(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(render)].join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// PostgreSQL: BENCH_POSTGRES_URL, else TEST_POSTGRES_URL, else the local test server.

export const pgUrl = process.env.BENCH_POSTGRES_URL ?? process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** undefined when PostgreSQL answers, else why not. */
export async function postgresUnreachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates a fresh database `<prefix>_<random>` next to pgUrl's; `drop()` removes it (connections forced off). */
export async function freshPostgresDatabase(prefix = 'bench'): Promise<{ uri: string; name: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  return {
    uri: url.toString(),
    name,
    async drop() {
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Node flags of every server process, the same for the baseline and Switchboard, in both benchmarks: by default the
 * flag the service's own start scripts use (package.json `start`, Dockerfile); BENCH_NODE_FLAGS overrides (empty: none).
 */
export const serverNodeFlags = (process.env.BENCH_NODE_FLAGS ?? '--max-semi-space-size=64').split(' ').filter(Boolean);

/** One `--name=value` argument: its name, its value, and the value read as a positive number (or an error naming it). */
export function benchArg(arg: string): { name: string; value: string; num(): number } {
  const [name, value = ''] = arg.replace(/^--/, '').split('=', 2);
  return {
    name,
    value,
    num() {
      const n = Number(value);
      if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} needs a positive number`);
      return n;
    },
  };
}
