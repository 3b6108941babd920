// Load from wrk (a load generator written in C; Debian: `apt-get install wrk`) for bench/sends.ts: about half of
// autocannon's CPU per request (15 against 28 µs measured here), which on a two-core machine is CPU taken from the
// server under test and its database.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface WrkLoad {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface WrkResult {
  /** Answers read in the window (any status). */
  requests: number;
  durationS: number;
  /** Latency percentiles from wrk's histogram (microsecond resolution), in ms. */
  p50Ms: number;
  p99Ms: number;
  /** Answers with status ≥ 400, and socket errors by kind. */
  badStatus: number;
  connectErrors: number;
  readErrors: number;
  writeErrors: number;
  timeouts: number;
  /** CPU seconds wrk itself used (user + system). */
  cpuS: number;
}

/** undefined when wrk can be run, else what to do about it. */
export function wrkMissing(): string | undefined {
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  return probe.error ? 'wrk is not installed (Debian/Ubuntu: apt-get install wrk)' : undefined;
}

/** Lua long-bracket literal: no escaping needed as long as the text holds no closing bracket of that level. */
function luaLiteral(text: string): string {
  let level = '';
  while (text.includes(`]${level}]`)) level += '=';
  return `[${level}[${text}]${level}]`;
}

function script(load: WrkLoad): string {
  const headers = Object.entries(load.headers).map(([name, value]) => `wrk.headers[ ${luaLiteral(name)} ] = ${luaLiteral(value)}`);
  return [
    'wrk.method = "POST"',
    `wrk.body = ${luaLiteral(load.body)}`,
    ...headers,
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format("WRK-RESULT %d %d %d %d %d %d %d %d %d\\n", summary.requests, summary.duration,',
    '    latency:percentile(50), latency:percentile(99), e.status, e.connect, e.read, e.write, e.timeout))',
    'end',
  ].join('\n');
}

/** Runs wrk with one thread and `connections` connections for `seconds`; its CPU time comes from the shell's `times`. */
export async function runWrk(load: WrkLoad, connections: number, seconds: number): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-wrk-'));
  try {
    const scriptPath = join(dir, 'load.lua');
    writeFileSync(scriptPath, script(load));
    const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', scriptPath, load.url];
    // `times` prints the shell's own CPU time, then its children's: wrk's.
    const proc = spawn('bash', ['-c', 'wrk "$@"; status=$?; times; exit $status', 'wrk', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    proc.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const code = await new Promise<number | null>((done) => proc.once('exit', done));
    const line = /WRK-RESULT ((?:\d+ ?){9})/.exec(out);
    const times = [...out.matchAll(/(\d+)m([\d.]+)s (\d+)m([\d.]+)s/g)];
    if (code !== 0 || !line || times.length < 2) throw new Error(`wrk failed (exit ${code}): ${out.slice(-500)}`);
    const [requests, durationUs, p50Us, p99Us, badStatus, connectErrors, readErrors, writeErrors, timeouts] = line[1].trim().split(' ').map(Number);
    const child = times[1];
    const cpuS = Number(child[1]) * 60 + Number(child[2]) + Number(child[3]) * 60 + Number(child[4]);
    return {
      requests,
      durationS: durationUs / 1e6,
      p50Ms: p50Us / 1000,
      p99Ms: p99Us / 1000,
      badStatus,
      connectErrors,
      readErrors,
      writeErrors,
      timeouts,
      cpuS,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
