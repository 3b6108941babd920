// Floor for the send benchmark: the least a server can do and still store every send before answering 201 — bare
// Fastify plus one group-committed insert of (id, body) per batch, one batch in flight, on SQLite (WAL, synchronous
// NORMAL, on the event loop) or PostgreSQL. Nothing of Switchboard is loaded. Run as its own process by
// bench/sends.ts --floor: PORT, and FLOOR_SQLITE_PATH or FLOOR_POSTGRES_URL, from the environment.
import { randomUUID } from 'node:crypto';
import SqliteDatabase from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';

interface Row {
  id: string;
  body: string;
}

/** Writes one batch of rows in one transaction. */
type WriteBatch = (rows: Row[]) => Promise<void>;

async function sqliteWriter(path: string): Promise<{ write: WriteBatch; close(): Promise<void> }> {
  const db = new SqliteDatabase(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('create table if not exists floor_sends (id text primary key, body text not null)');
  const insert = db.prepare('insert into floor_sends (id, body) values (?, ?)');
  const writeAll = db.transaction((rows: Row[]) => {
    for (const row of rows) insert.run(row.id, row.body);
  });
  return {
    write: async (rows) => writeAll(rows),
    close: async () => {
      db.close();
    },
  };
}

async function postgresWriter(uri: string): Promise<{ write: WriteBatch; close(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: uri, max: 2 });
  await pool.query('create table if not exists floor_sends (id text primary key, body text not null)');
  const text = 'insert into floor_sends (id, body) select id, body from json_populate_recordset(null::floor_sends, $1)';
  return {
    write: async (rows) => {
      await pool.query({ name: 'floor_insert', text, values: [JSON.stringify(rows)] });
    },
    close: () => pool.end(),
  };
}

const sqlitePath = process.env.FLOOR_SQLITE_PATH;
const postgresUrl = process.env.FLOOR_POSTGRES_URL;
if (!sqlitePath === !postgresUrl) throw new Error('set exactly one of FLOOR_SQLITE_PATH and FLOOR_POSTGRES_URL');
const store = sqlitePath ? await sqliteWriter(sqlitePath) : await postgresWriter(postgresUrl ?? '');

// Group commit: what arrives before the next turn of the event loop shares one transaction; one batch at a time.
let pending: { row: Row; done: () => void; fail: (error: unknown) => void }[] = [];
let writing = false;
function schedule(): void {
  if (!writing) setImmediate(() => void drain());
}
async function drain(): Promise<void> {
  if (writing) return;
  writing = true;
  while (pending.length > 0) {
    const batch = pending;
    pending = [];
    try {
      await store.write(batch.map((p) => p.row));
      for (const p of batch) p.done();
    } catch (error) {
      for (const p of batch) p.fail(error);
    }
  }
  writing = false;
}

const app = Fastify({ logger: false });
app.post('/send', async (request, reply) => {
  const body = request.body as { number?: unknown; text?: unknown } | null;
  const id = randomUUID();
  await new Promise<void>((done, fail) => {
    pending.push({ row: { id, body: JSON.stringify(body) }, done, fail });
    schedule();
  });
  return reply.status(201).send({
    key: { remoteJid: `${String(body?.number ?? '')}@s.whatsapp.net`, fromMe: true, id },
    status: 'PENDING',
    message: { conversation: String(body?.text ?? '') },
  });
});

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });

const stop = () => {
  void app
    .close()
    .then(() => store.close())
    .then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
