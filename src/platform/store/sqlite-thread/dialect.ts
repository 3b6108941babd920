// Kysely's SQLite dialect over the SQLite thread: queries are compiled here and run there.
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';
import type { SqliteThread } from './host.js';
import type { ThreadStatement } from './protocol.js';

/** SQLite as Kysely knows it (compiler, adapter, introspector), its statements run by `thread`. */
export class SqliteThreadDialect implements Dialect {
  constructor(private readonly thread: SqliteThread) {}

  createDriver(): Driver {
    return new SqliteThreadDriver(this.thread);
  }

  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }

  createAdapter() {
    return new SqliteAdapter();
  }

  createIntrospector(db: Kysely<unknown>) {
    return new SqliteIntrospector(db);
  }
}

/**
 * One connection (the thread's), lent to every caller at once: a query outside a transaction is sent as soon as no
 * transaction is open, and several can be in flight; a transaction holds the thread's lock from BEGIN until its
 * connection is released.
 */
class SqliteThreadDriver implements Driver {
  constructor(private readonly thread: SqliteThread) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new ThreadConnection(this.thread);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as ThreadConnection).begin();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as ThreadConnection).release();
  }

  async destroy(): Promise<void> {
    await this.thread.close();
  }
}

/**
 * A caller's use of the thread's connection: inside its own transaction once `begin` took the lock. BEGIN itself
 * goes with the transaction's first statement (one message there and back less while the lock is held), and a
 * transaction that ran nothing sends neither BEGIN nor its end.
 */
class ThreadConnection implements DatabaseConnection {
  private holdsLock = false;
  private beginPending = false;

  constructor(private readonly thread: SqliteThread) {}

  async begin(): Promise<void> {
    await this.thread.lock();
    this.holdsLock = true;
    this.beginPending = true;
  }

  release(): void {
    if (!this.holdsLock) return;
    this.holdsLock = false;
    this.beginPending = false;
    this.thread.unlock();
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.beginPending && /^(commit|rollback)$/i.test(query.sql)) {
      this.beginPending = false;
      return { rows: [] };
    }
    const statements: ThreadStatement[] = [{ sql: query.sql, parameters: query.parameters }];
    if (this.beginPending) {
      statements.unshift({ sql: 'begin', parameters: [] });
      this.beginPending = false;
    }
    const { results } = await (this.holdsLock ? this.thread.run(statements, false) : this.thread.runOutside(statements, false));
    const result = results[results.length - 1];
    if (result.rows) return { rows: result.rows as R[] };
    return { numAffectedRows: BigInt(result.changes), insertId: BigInt(result.lastInsertRowid), rows: [] };
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    // Rows come back from the thread all at once; handed on one at a time, as the driver's own iterator does.
    const { rows } = await this.executeQuery<R>(query);
    for (const row of rows) yield { rows: [row] };
  }
}

/** The thread behind each store's Kysely instance: for units of work sent to it whole (see `write-unit.ts`). */
const threads = new WeakMap<object, SqliteThread>();

export function registerSqliteThread(db: object, thread: SqliteThread): void {
  threads.set(db, thread);
}

/** The SQLite thread of a store's Kysely instance (undefined for PostgreSQL). */
export function sqliteThreadOf(db: object): SqliteThread | undefined {
  return threads.get(db);
}
