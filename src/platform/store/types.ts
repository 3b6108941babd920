// The store's types: the database handle, a transaction, the dialect and the opened store.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';
export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;

export interface Store {
  db: Db;
  dialect: Dialect;
  /** Checks the store answers (used by /health). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
