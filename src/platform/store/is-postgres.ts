// Which dialect a Kysely instance speaks, for the few statements written for one dialect only.
import { PostgresAdapter } from 'kysely';
import type { Db, Tx } from './types.js';

/** Whether `db` (or a transaction of it) speaks to PostgreSQL. */
export function isPostgres(db: Db | Tx): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
