// Opens the store (SQLite file or PostgreSQL) behind one Kysely query layer and applies migrations.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import pg from 'pg';
import { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { Store } from './types.js';
import { migrate } from './migrations.js';
import { startCheckpointer } from './sqlite-checkpointer.js';
import { SqliteThread } from './sqlite-thread/host.js';
import { registerSqliteThread, SqliteThreadDialect } from './sqlite-thread/dialect.js';
import { prepareStatements } from './pg-prepared.js';
import { OneSchemaPostgresDialect } from './pg-one-schema.js';
import { registerColumnTypes, type ColumnTypes } from './write-unit.js';
import { isPlainIdentifier, isPostgresUri, readPostgresUri, type PostgresUri } from './pg-uri.js';
import { postgresOpenFailure, sqliteOpenFailure } from './open-failures.js';
import { StartupError } from '../startup-error.js';
import { takeOneNodeLock, type OneNodeLock } from './sqlite-one-node.js';
import { LocalSignals, PostgresSignals } from './signals.js';

export type { Db, Dialect, Store, Tx } from './types.js';

// PostgreSQL returns int8 as strings by default; our bigints are epoch ms and sequence numbers, safe as numbers.
pg.types.setTypeParser(20, (value: string) => Number(value));

export interface OpenStoreOptions {
  /** PostgreSQL only: run in this schema (created if missing). Used by tests to isolate runs. */
  schema?: string;
  poolSize?: number;
}

export async function openStore(uri: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (isPostgresUri(uri)) return openPostgres(uri, options);
  if (uri.startsWith('file:')) return openSqlite(uri.slice('file:'.length));
  throw new StartupError('DATABASE_CONNECTION_URI', 'must start with file: (SQLite) or postgres:// (PostgreSQL)');
}

async function openSqlite(path: string): Promise<Store> {
  const inMemory = path === ':memory:';
  // 2 KiB pages (a new database only; an existing file keeps its own): every commit writes each page it touches
  // whole, and an accept batch adds a little to each of seven B-trees. Measured: 5.8 KiB written to storage per
  // accepted send instead of 8.3 with 4 KiB pages, and no loss in sends or events per second (bench/RESULTS.md).
  const pragmas = ['page_size = 2048', 'journal_mode = WAL', 'synchronous = NORMAL', 'busy_timeout = 5000', 'foreign_keys = ON', 'cache_size = -65536'];
  // Checkpoints run in a thread of their own (see sqlite-checkpointer.ts) instead of inside a commit.
  if (!inMemory) pragmas.push('wal_autocheckpoint = 0');
  // Every statement runs in the SQLite thread, so the event loop never waits for the database.
  let thread: SqliteThread;
  let lock: OneNodeLock | undefined;
  try {
    if (!inMemory) {
      mkdirSync(dirname(resolve(path)), { recursive: true });
      lock = takeOneNodeLock(resolve(path));
    }
    thread = await SqliteThread.open({ path: inMemory ? ':memory:' : resolve(path), pragmas });
  } catch (error) {
    lock?.release();
    if (error instanceof StartupError) throw error;
    throw sqliteOpenFailure(error, path);
  }
  const checkpointer = inMemory
    ? undefined
    : startCheckpointer(resolve(path), { busyMs: 20, idleMs: 250 }, (message) => process.emitWarning(`sqlite checkpoint: ${message}`));
  const db = new Kysely<Database>({ dialect: new SqliteThreadDialect(thread) });
  registerSqliteThread(db, thread);
  try {
    await migrate(db as Kysely<unknown>, 'sqlite');
  } catch (error) {
    await db.destroy();
    await checkpointer?.stop();
    lock?.release();
    throw error;
  }
  const signals = new LocalSignals();
  return {
    db,
    dialect: 'sqlite',
    signals,
    async ping() {
      await thread.run([{ sql: 'select 1', parameters: [] }], false);
    },
    async close() {
      await signals.close();
      await db.destroy();
      await checkpointer?.stop();
      lock?.release();
    },
  };
}

/**
 * The pool's session options: the URI's own `options` (pg would let them replace ours), then ours. Statements stay
 * prepared (parsed once) but are planned for their values: a generic plan cached while the tables were still small
 * (a young database) kept scanning them whole once they had grown (4 ms instead of 0.05 ms per status lookup).
 */
function sessionOptions(fromUri: string | undefined, schema: string | undefined): string {
  const options = [fromUri, '-c plan_cache_mode=force_custom_plan', schema ? `-c search_path=${schema}` : null];
  return options.filter(Boolean).join(' ');
}

/** Connects once, with a bounded wait, and creates the schema when it is missing: a failure here is a start-up line. */
async function prepareDatabase(uri: PostgresUri, schema: string | undefined): Promise<void> {
  const client = new pg.Client({ connectionString: uri.connectionString, connectionTimeoutMillis: 15_000 });
  try {
    await client.connect();
    if (schema) await createSchemaIfMissing(client, schema);
  } catch (error) {
    throw postgresOpenFailure(error, uri);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates the schema unless it exists (a user without CREATE on the database can still use one made for it). */
async function createSchemaIfMissing(client: pg.Client, schema: string): Promise<void> {
  const { rowCount } = await client.query('select 1 from pg_catalog.pg_namespace where nspname = $1', [schema]);
  if (rowCount) return;
  try {
    await client.query(`create schema if not exists ${schema}`);
  } catch (error) {
    // Another node starting at the same moment created it first.
    const code = (error as { code?: string }).code;
    if (code !== '23505' && code !== '42P06') throw error;
  }
}

async function openPostgres(uri: string, options: OpenStoreOptions): Promise<Store> {
  const parsed = readPostgresUri(uri);
  // The caller's schema (tests isolate runs so), else the URI's `schema` parameter (Evolution's spelling).
  const schema = options.schema ?? parsed.schema;
  if (schema !== undefined && !isPlainIdentifier(schema)) throw new Error('invalid schema name');
  await prepareDatabase(parsed, schema);
  const pool = new pg.Pool({
    connectionString: parsed.connectionString,
    options: sessionOptions(parsed.options, schema),
    max: options.poolSize ?? 10,
  });
  // The server processes of this node's connections: a signal one of them sent is this node's own.
  const ownBackends = new Set<number>();
  const backendOf = (client: pg.PoolClient) => (client as pg.PoolClient & { processID?: number | null }).processID; // set by pg, untyped
  pool.on('connect', (client) => {
    prepareStatements(client);
    const processId = backendOf(client);
    if (typeof processId === 'number') ownBackends.add(processId);
  });
  pool.on('remove', (client) => {
    const processId = backendOf(client);
    if (typeof processId === 'number') ownBackends.delete(processId);
  });
  const current = schema ?? ((await pool.query<{ schema: string }>('select current_schema() as schema')).rows[0]?.schema || 'public');
  const db = new Kysely<Database>({ dialect: new OneSchemaPostgresDialect({ pool }, current) });
  await migrate(db as Kysely<unknown>, 'postgres', current);
  registerColumnTypes(db, await readColumnTypes(pool, current));
  const signals = new PostgresSignals({
    db,
    schema: current,
    connect: () => new pg.Client({ connectionString: parsed.connectionString, options: sessionOptions(parsed.options, schema) }),
    onError: (error) => process.emitWarning(`store signals: ${error instanceof Error ? error.message : String(error)}; listening again`),
    isOwnBackend: (processId) => ownBackends.has(processId),
  });
  return {
    db,
    dialect: 'postgres',
    signals,
    async ping() {
      await pool.query('select 1');
    },
    async close() {
      await signals.close();
      await db.destroy();
    },
  };
}

/** The column types of the schema's tables (for casts in statements that build rows from VALUES). */
async function readColumnTypes(pool: pg.Pool, schema: string): Promise<ColumnTypes> {
  const { rows } = await pool.query<{ table_name: string; column_name: string; data_type: string }>(
    'select table_name, column_name, data_type from information_schema.columns where table_schema = $1',
    [schema],
  );
  const types: ColumnTypes = new Map();
  for (const row of rows) {
    let table = types.get(row.table_name);
    if (!table) {
      table = new Map();
      types.set(row.table_name, table);
    }
    table.set(row.column_name, row.data_type);
  }
  return types;
}
