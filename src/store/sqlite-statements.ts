// SQLite connection helpers: prepared statements reused by SQL text, and WAL checkpoints off the event loop.
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import type { SqliteDatabase as KyselySqliteDatabase } from 'kysely';

const maxCachedStatements = 500;

/** Kysely prepares every query anew; this keeps the prepared statements of recent SQL texts (least recently used out). */
export function withStatementCache(db: SqliteDatabase): KyselySqliteDatabase {
  const cache = new Map<string, Statement>();
  return {
    close: () => db.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = db.prepare(sql);
        if (cache.size >= maxCachedStatements) cache.delete(cache.keys().next().value as string);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

// The checkpointer runs in its own thread with its own connection, so copying the WAL into the database file (and
// the fsync that goes with it) never blocks request handling. CommonJS source, evaluated by the worker.
const checkpointerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 2000');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (error) { parentPort.postMessage(String(error)); }
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  try { db.pragma('wal_checkpoint(TRUNCATE)'); } catch {}
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

/** Starts periodic WAL checkpoints of the database file at `path` in a worker thread. */
export function startCheckpointer(path: string, intervalMs: number, onError: (message: string) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(checkpointerSource, { eval: true, workerData: { driver, path, intervalMs } });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  worker.on('message', (message: unknown) => onError(String(message)));
  worker.on('error', (error) => onError(String(error)));
  worker.unref();
  return {
    async stop() {
      if (exited) return;
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), 3000);
      await exit;
      clearTimeout(timer);
    },
  };
}
