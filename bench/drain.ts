// Delivery cost benchmark: queues sends on an unlinked SANDBOX instance, links it, and measures how fast the send
// worker drains the queue and the server's CPU time per delivered send (no API load meanwhile).
//
//   npm run bench:drain                      # SQLite and PostgreSQL, 20,000 sends each
//   npm run bench:drain -- --only=sqlite --sends=50000
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import {
  freePort,
  freshPostgresDatabase,
  installExitHandlers,
  pgUrl,
  postgresUnreachable,
  serverNodeFlags,
  sleep,
  startChild,
  stopChild,
  waitReady,
} from './lib-bench.js';

installExitHandlers();

let sends = 20_000;
let only: string[] = ['sqlite', 'postgres'];
for (const arg of process.argv.slice(2)) {
  const [name, value = ''] = arg.replace(/^--/, '').split('=', 2);
  if (name === 'sends' && Number(value) > 0) sends = Math.round(Number(value));
  else if (name === 'only') only = value.split(',');
  else throw new Error(`unknown option ${arg} (known: --sends=<n> --only=sqlite,postgres)`);
}

/** CPU time (user + system) of a process so far, in ms. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU time (user + system) of every PostgreSQL server process on this machine so far, in ms (its backends do the work). */
function postgresCpuMs(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
}

async function run(store: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-drain-'));
  const database = store === 'postgres' ? await freshPostgresDatabase() : undefined;
  const uri = database?.uri ?? `file:${join(dir, 'drain.db')}`;
  /** Sends still queued: counted once before the drain; while it runs only "any left?" is asked, by the primary key
   *  (a count of a table the worker is emptying cost PostgreSQL 30 ms a look, as much CPU as the drain itself). */
  const queueQuery = async (text: string): Promise<number> => {
    if (database) {
      const client = new pg.Client({ connectionString: uri });
      await client.connect();
      try {
        return Number((await client.query(text)).rows[0]?.n ?? 0);
      } finally {
        await client.end();
      }
    }
    const db = new SqliteDatabase(join(dir, 'drain.db'), { readonly: true });
    try {
      return (db.prepare(text).get() as { n: number } | undefined)?.n ?? 0;
    } finally {
      db.close();
    }
  };
  const queued = () => queueQuery('select count(*) as n from send_queue');
  const anyQueued = async () => (await queueQuery('select 1 as n from send_queue order by seq limit 1')) > 0;
  const port = await freePort();
  const key = `drain-${randomBytes(8).toString('hex')}`;
  const base = `http://127.0.0.1:${port}`;
  const child = startChild(
    store,
    'src/main.ts',
    {
      AUTHENTICATION_API_KEY: key,
      // The bench drives instance keys far past RATE_LIMIT_MAX: it measures the service, not its rate limit.
      RATE_LIMIT_ENABLED: 'false',
      SERVER_PORT: String(port),
      SERVER_HOST: '127.0.0.1',
      SERVER_URL: base,
      DATA_DIR: join(dir, 'data'),
      DATABASE_CONNECTION_URI: uri,
      LOG_LEVEL: 'warn',
    },
    serverNodeFlags,
  );
  try {
    await waitReady(child, async () => (await fetch(`${base}/health`)).status === 200);
    const api = async (path: string, body: unknown, apikey = key) => {
      const response = await fetch(`${base}/messenger/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', apikey },
        body: JSON.stringify(body),
      });
      // biome-ignore lint/suspicious/noExplicitAny: the answers are read field by field
      return (await response.json()) as any;
    };
    const created = await api('instance/create', { instanceName: 'drain', integration: 'SANDBOX', qrcode: true });
    await new Promise((done, fail) =>
      autocannon(
        {
          url: `${base}/messenger/message/sendText/drain`,
          method: 'POST',
          headers: { 'content-type': 'application/json', apikey: created.hash.apikey },
          body: JSON.stringify({ number: '5511988887777', text: 'drain' }),
          connections: 50,
          amount: sends,
        },
        (error: unknown, result: unknown) => (error ? fail(error) : done(result)),
      ),
    );
    const before = await queued();
    await sleep(1000);
    const pid = child.proc.pid ?? 0;
    const cpuBefore = cpuMs(pid);
    const postgresBefore = database ? postgresCpuMs() : 0;
    const started = Date.now();
    await api('sandbox/scan', { code: created.qrcode.code, number: '5511900000001' });
    // Bounded: 10 minutes at most.
    for (let i = 0; i < 6000 && (await anyQueued()); i++) await sleep(100);
    const ms = Date.now() - started;
    const cpu = cpuMs(pid) - cpuBefore;
    const postgresCpu = database ? postgresCpuMs() - postgresBefore : 0;
    console.log(
      `${store.padEnd(8)}  ${before} sends drained in ${ms} ms (${Math.round(before / (ms / 1000))} sends/s); ` +
        `server CPU ${cpu} ms = ${((cpu * 1000) / before).toFixed(1)} µs per delivered send` +
        (database ? `; PostgreSQL CPU ${postgresCpu} ms = ${((postgresCpu * 1000) / before).toFixed(1)} µs per delivered send` : ''),
    );
  } finally {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  }
}

for (const store of only) {
  if (store === 'postgres') {
    const unreachable = await postgresUnreachable();
    if (unreachable) {
      console.log(`*** PostgreSQL not reachable at ${pgUrl} (${unreachable}): SKIPPED ***`);
      continue;
    }
  }
  await run(store);
}
