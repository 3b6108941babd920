// findMessages benchmark: one chat's first page and a deep page through the real HTTP route, on stores holding 1,000,
// 100,000 and 1,000,000 messages (chats of 1,000 messages each, interleaved in time), and the ratio to the smallest.
//
//   npm run bench:find-messages                          # SQLite and PostgreSQL
//   npm run bench:find-messages -- --only=sqlite --requests=300
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import {
  benchArg,
  fmt,
  freePort,
  freshPostgresDatabase,
  installExitHandlers,
  percentile,
  pgUrl,
  postgresUnreachable,
  renderTable,
  serverNodeFlags,
  startChild,
  stopChild,
  waitReady,
} from './lib-bench.js';

installExitHandlers();

let requests = 200;
let only: string[] = ['sqlite', 'postgres'];
for (const arg of process.argv.slice(2)) {
  const option = benchArg(arg);
  if (option.name === 'requests') requests = Math.round(option.num());
  else if (option.name === 'only') only = option.value.split(',');
  else throw new Error(`unknown option ${arg} (known: --requests=<n> --only=sqlite,postgres)`);
}

/** Messages per chat: the chat paged is the same size in both stores; only the rest of the store grows. */
const perChat = 1_000;
const pageSize = 50;
/** The deep page: the chat's last full page. */
const deepPage = perChat / pageSize - 1;
const sizes = [1_000, 100_000, 1_000_000];
const baseTime = 1_700_000_000;

const chatJid = (chat: number) => `55119${String(chat).padStart(8, '0')}@s.whatsapp.net`;

/**
 * The i-th message overall belongs to chat i % chats, at time base + i (so every chat's messages are spread over the
 * whole time range); own messages (every other one) have a SERVER_ACK status row, as sends do.
 */
function seedSqlite(file: string, instanceId: string, total: number): void {
  const db = new SqliteDatabase(file);
  db.pragma('busy_timeout = 10000');
  const chats = total / perChat;
  const insertMessage = db.prepare(
    `insert into messages (id, instance_id, key_id, remote_jid, from_me, participant, push_name, message_type, content, status,
       message_timestamp, source, idempotency_key, request_hash, created_at, updated_at)
     values (?, ?, ?, ?, ?, null, ?, 'conversation', ?, ?, ?, 'web', null, null, ?, ?)`,
  );
  const insertStatus = db.prepare('insert into message_status (message_id, instance_id, status, detail, at) values (?, ?, ?, null, ?)');
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const id = `m${String(i).padStart(10, '0')}`;
      const fromMe = i % 2;
      const at = (baseTime + i) * 1000;
      insertMessage.run(
        id,
        instanceId,
        `K${i}`,
        chatJid(i % chats),
        fromMe,
        fromMe ? null : 'Sender',
        JSON.stringify({ conversation: `message ${i}` }),
        fromMe ? 'SERVER_ACK' : 'DELIVERY_ACK',
        baseTime + i,
        at,
        at,
      );
      if (fromMe) insertStatus.run(id, instanceId, 'SERVER_ACK', at);
    }
  });
  for (let from = 0; from < total; from += 50_000) batch(from, Math.min(total, from + 50_000));
  db.pragma('optimize');
  db.close();
}

/** The same rows as `seedSqlite`, made by PostgreSQL itself (generate_series), then vacuumed and analysed. */
async function seedPostgres(uri: string, instanceId: string, total: number): Promise<void> {
  const client = new pg.Client({ connectionString: uri });
  await client.connect();
  try {
    const chats = total / perChat;
    await client.query(
      `insert into messages (id, instance_id, key_id, remote_jid, from_me, participant, push_name, message_type, content, status,
         message_timestamp, source, idempotency_key, request_hash, created_at, updated_at)
       select 'm' || lpad(i::text, 10, '0'), $1, 'K' || i, '55119' || lpad((i % $2)::text, 8, '0') || '@s.whatsapp.net', i % 2, null,
         case when i % 2 = 1 then null else 'Sender' end, 'conversation', '{"conversation":"message ' || i || '"}',
         case when i % 2 = 1 then 'SERVER_ACK' else 'DELIVERY_ACK' end, $3::bigint + i, 'web', null, null, ($3::bigint + i) * 1000, ($3::bigint + i) * 1000
       from generate_series(0, $4::int - 1) as i`,
      [instanceId, chats, baseTime, total],
    );
    await client.query(
      `insert into message_status (message_id, instance_id, status, detail, at)
       select id, instance_id, 'SERVER_ACK', null, created_at from messages where instance_id = $1 and from_me = 1 order by id`,
      [instanceId],
    );
    // As autovacuum would have by then: statistics, and the visibility map that lets counts read the index alone.
    await client.query('vacuum analyze messages');
    await client.query('vacuum analyze message_status');
    const plan = await client.query(
      `explain select id from messages where instance_id = $1 and remote_jid = $2 order by message_timestamp desc, id desc limit 50`,
      [instanceId, chatJid(0)],
    );
    console.log(`postgres plan of a page (${total.toLocaleString('en')} stored): ${plan.rows.map((r) => Object.values(r)[0]).join(' / ')}`);
  } finally {
    await client.end();
  }
}

interface Timing {
  median: number;
  p95: number;
}

async function time(call: () => Promise<void>): Promise<Timing> {
  for (let i = 0; i < 20; i++) await call();
  const samples: number[] = [];
  for (let i = 0; i < requests; i++) {
    const started = process.hrtime.bigint();
    await call();
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return { median: percentile(samples, 0.5), p95: percentile(samples, 0.95) };
}

async function measure(store: string, total: number): Promise<{ first: Timing; deep: Timing }> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-find-'));
  const database = store === 'postgres' ? await freshPostgresDatabase('findbench') : undefined;
  const file = join(dir, 'find.db');
  const uri = database?.uri ?? `file:${file}`;
  const port = await freePort();
  const key = `find-${randomBytes(8).toString('hex')}`;
  const base = `http://127.0.0.1:${port}`;
  const env = {
    AUTHENTICATION_API_KEY: key,
    // The bench drives instance keys far past RATE_LIMIT_MAX: it measures the service, not its rate limit.
    RATE_LIMIT_ENABLED: 'false',
    SERVER_PORT: String(port),
    SERVER_HOST: '127.0.0.1',
    SERVER_URL: base,
    DATA_DIR: join(dir, 'data'),
    DATABASE_CONNECTION_URI: uri,
    LOG_LEVEL: 'warn',
  };
  let child = startChild(store, 'src/main.ts', env, serverNodeFlags);
  try {
    await waitReady(child, async () => (await fetch(`${base}/health`)).status === 200);
    const api = async (path: string, body: unknown) => {
      const response = await fetch(`${base}/messenger/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', apikey: key },
        body: JSON.stringify(body),
      });
      // biome-ignore lint/suspicious/noExplicitAny: the answers are read field by field
      return { status: response.status, body: (await response.json()) as any };
    };
    const created = await api('instance/create', { instanceName: 'find', integration: 'EVOLUTION' });
    const instanceId: string = created.body.instance.instanceId;
    // Seeded with the server stopped (SQLite: one writer), then started again on the seeded store.
    await stopChild(child);
    const seeding = Date.now();
    if (database) await seedPostgres(uri, instanceId, total);
    else seedSqlite(file, instanceId, total);
    console.log(`${store.padEnd(8)} ${total.toLocaleString('en')} messages seeded in ${((Date.now() - seeding) / 1000).toFixed(1)} s`);
    child = startChild(store, 'src/main.ts', env, serverNodeFlags);
    await waitReady(child, async () => (await fetch(`${base}/health`)).status === 200);
    const find = (page: number) => async () => {
      const answer = await api('chat/findMessages/find', { where: { key: { remoteJid: chatJid(0) } }, page, offset: pageSize });
      const found = answer.body.messages;
      if (answer.status !== 200 || found.total !== perChat || found.records.length !== pageSize) {
        throw new Error(`unexpected answer: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
      }
    };
    return { first: await time(find(1)), deep: await time(find(deepPage)) };
  } finally {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
    await database?.drop();
  }
}

const rows: string[][] = [];
for (const store of only) {
  if (store === 'postgres') {
    const unreachable = await postgresUnreachable();
    if (unreachable) {
      console.log(`*** PostgreSQL not reachable at ${pgUrl} (${unreachable}): SKIPPED ***`);
      continue;
    }
  }
  const timings = [];
  for (const size of sizes) timings.push(await measure(store, size));
  const [small, middle, large] = timings;
  for (const which of ['first', 'deep'] as const) {
    rows.push([
      store,
      which === 'first' ? 'page 1' : `page ${deepPage}`,
      ...[small, middle, large].map((t) => `${fmt(t[which].median, 2)} (${fmt(t[which].p95, 1)})`),
      fmt(middle[which].median / small[which].median, 2),
      fmt(large[which].median / small[which].median, 2),
    ]);
  }
}
console.log(
  `\nfindMessages of one chat (${perChat} messages, pages of ${pageSize}), ${requests} sequential requests each, ms:\n` +
    renderTable(['store', 'page', '1k median (p95)', '100k median (p95)', '1M median (p95)', 'ratio 100k/1k', 'ratio 1M/1k'], rows),
);
