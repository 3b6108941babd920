// The store's types: the database handle, a transaction, the dialect and the opened store.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';
import type { StoreSignals } from './signals.js';

export type Dialect = 'sqlite' | 'postgres';
export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;

export interface Store {
  db: Db;
  dialect: Dialect;
  /** Signals to every node of the store (wake-ups, changes): LISTEN/NOTIFY on PostgreSQL, in-process on SQLite. */
  signals: StoreSignals;
  /** Checks the store answers (used by /health). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
