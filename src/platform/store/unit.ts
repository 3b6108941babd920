// A unit of work: one transaction, rows gathered for multi-row inserts, and hooks that run after commit.
import { CompiledQuery, type Insertable } from 'kysely';
import type { Db, Tx } from './types.js';
import type { Database } from './schema.js';
import { isPostgres } from './is-postgres.js';
import { jsonInsert } from './pg-json-insert.js';
import { columnsOf } from './row-columns.js';
import { sqliteThreadOf } from './sqlite-thread/dialect.js';
import type { ThreadStatement } from './sqlite-thread/protocol.js';
import { UpsertRows, type RowMerge, type UpsertSpec } from './upserts.js';

export type BatchedTable = 'messages' | 'message_status' | 'send_queue' | 'outbox' | 'deliveries' | 'media_blobs';
// Insert order matters only for readability of the store; no foreign keys link these tables.
export const insertOrder: BatchedTable[] = ['media_blobs', 'messages', 'message_status', 'send_queue', 'outbox', 'deliveries'];
export const maxRowsPerInsert = 200;

/** What writing an event or a row needs of a unit: rows inserted with it, hooks after its commit or rollback. */
export interface RowSink {
  insert<T extends BatchedTable>(table: T, row: Insertable<Database[T]>): void;
  afterCommit(hook: () => void): void;
  onRollback(hook: () => void): void;
}

/** A row sink that also takes upserts: rows merged per key within the unit, inserted or merged into a stored row. */
export interface UpsertSink extends RowSink {
  upsert(spec: UpsertSpec, key: string, row: Record<string, unknown>, merge?: RowMerge): void;
}

/** Rows to insert and hooks to run once they are committed: the part of a unit that needs no open transaction. */
export class RowBuffer implements UpsertSink {
  protected readonly rows: { [T in BatchedTable]: Insertable<Database[T]>[] } = {
    messages: [],
    message_status: [],
    send_queue: [],
    outbox: [],
    deliveries: [],
    media_blobs: [],
  };
  /** Upserted rows, written after the inserts. */
  protected readonly upserts = new UpsertRows();
  private readonly hooks: (() => void)[] = [];
  private readonly undo: (() => void)[] = [];

  /** Queues a row; all queued rows are inserted together before the transaction commits. */
  insert<T extends BatchedTable>(table: T, row: Insertable<Database[T]>): void {
    this.rows[table].push(row);
  }

  /** Queues a row to insert, or to merge into the stored row it collides with (see `UpsertSpec`); merged per key. */
  upsert(spec: UpsertSpec, key: string, row: Record<string, unknown>, merge?: RowMerge): void {
    this.upserts.add(spec, key, row, merge);
  }

  /** The queued upserts as statements, numbered on from `firstParameter` one after the other (dollar placeholders). */
  protected takeUpserts(placeholders: Placeholders, firstParameter = 1): CompiledQuery[] {
    let next = firstParameter;
    return this.upserts.take((table, rows) => {
      const statement = multiRowInsert(table, rows, placeholders, next);
      if (placeholders === 'dollar') next += statement.parameters.length;
      return statement;
    }, maxRowsPerInsert);
  }

  afterCommit(hook: () => void): void {
    this.hooks.push(hook);
  }

  /** Runs when the transaction rolls back: undoes in-memory changes made ahead of the commit. */
  onRollback(hook: () => void): void {
    this.undo.push(hook);
  }

  runRollbackHooks(): void {
    for (const hook of this.undo.splice(0)) hook();
  }

  runHooks(): void {
    for (const hook of this.hooks.splice(0)) {
      try {
        hook();
      } catch {
        // After-commit hooks only wake workers; a failure must not undo or fail the committed work.
      }
    }
  }

  /**
   * Takes the queued rows as INSERT statements (several rows each), in table order: for PostgreSQL joined into one
   * statement (data-modifying WITH clauses: one round trip), for SQLite one per table and chunk.
   */
  protected takeInserts(placeholders: Placeholders): CompiledQuery[] {
    const joined = placeholders === 'dollar';
    const statements: CompiledQuery[] = [];
    let next = 1;
    for (const table of insertOrder) {
      const rows = this.rows[table] as Record<string, unknown>[];
      // PostgreSQL: all of a table's rows as one JSON value where they can go so.
      const asJson = joined && rows.length > 0 ? jsonInsert(table, rows, next) : undefined;
      if (asJson) {
        rows.length = 0;
        next += asJson.parameters.length;
        statements.push(asJson);
      }
      while (rows.length > 0) {
        const statement = multiRowInsert(table, rows.splice(0, maxRowsPerInsert), placeholders, next);
        if (joined) next += statement.parameters.length;
        statements.push(statement);
      }
    }
    for (const statement of this.takeUpserts(placeholders, next)) {
      if (joined) next += statement.parameters.length;
      statements.push(statement);
    }
    // PostgreSQL takes at most 65,535 parameters per statement: a larger unit goes as separate statements.
    if (!joined || statements.length <= 1 || next > maxJoinedParameters) return renumbered(statements, joined);
    const last = statements[statements.length - 1];
    const withClauses = statements.slice(0, -1).map((statement, i) => `w${i} as (${statement.sql})`);
    // Parameters appended in place: spreading each statement's list into a new one showed in profiles.
    const parameters: unknown[] = [];
    for (const statement of statements) for (const value of statement.parameters) parameters.push(value);
    return [CompiledQuery.raw(`with ${withClauses.join(', ')} ${last.sql}`, parameters)];
  }
}

/** A unit of work in an open transaction: queries through `tx`, rows queued for multi-row inserts. */
export class Unit extends RowBuffer {
  constructor(
    readonly tx: Tx,
    private readonly placeholders: Placeholders = 'question',
  ) {
    super();
  }

  /** Writes the queued rows now (use before a query that must see them). */
  async flush(): Promise<void> {
    for (const statement of this.takeInserts(this.placeholders)) await this.tx.executeQuery(statement);
  }
}

/** A unit that only inserts rows (no reads, no updates). */
export class InsertUnit extends RowBuffer {
  /** The queued rows as statements: one for PostgreSQL (atomic without BEGIN/COMMIT), for SQLite to run in one transaction. */
  statements(placeholders: Placeholders): CompiledQuery[] {
    return this.takeInserts(placeholders);
  }
}

type Placeholders = 'question' | 'dollar';

export const maxJoinedParameters = 60_000;

/** Statements numbered on from one to the next, made to stand alone again (each from $1). */
function renumbered(statements: CompiledQuery[], numberedOn: boolean): CompiledQuery[] {
  if (!numberedOn || statements.length <= 1) return statements;
  let offset = 0;
  return statements.map((statement) => {
    const shift = offset;
    offset += statement.parameters.length;
    const sql = statement.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) - shift}`);
    return CompiledQuery.raw(sql, [...statement.parameters]);
  });
}

/** INSERT texts by table, columns, row count and numbering: the same few shapes come back batch after batch. */
const insertTexts = new Map<string, string>();
const maxInsertTexts = 1_000;

/**
 * One INSERT for many rows of our own tables, written directly: the hot path of every send and event, where building
 * a query tree per value cost more than the insert itself. Column names come from our code, never from input.
 */
export function multiRowInsert(table: string, rows: Record<string, unknown>[], placeholders: Placeholders, firstParameter: number): CompiledQuery {
  const columns = columnsOf(rows);
  // Filled by push, so the array stays packed: a holey one costs three times as much to hand to the SQLite thread.
  const parameters: unknown[] = [];
  for (const row of rows) {
    for (const column of columns) {
      const value = row[column];
      parameters.push(value === undefined ? null : value);
    }
  }
  const key = `${table}|${placeholders}|${firstParameter}|${rows.length}|${columns.join(',')}`;
  let text = insertTexts.get(key);
  if (text === undefined) {
    text = insertText(table, columns, rows.length, placeholders, firstParameter);
    if (insertTexts.size >= maxInsertTexts) insertTexts.clear();
    insertTexts.set(key, text);
  }
  return CompiledQuery.raw(text, parameters);
}

function insertText(table: string, columns: string[], rowCount: number, placeholders: Placeholders, firstParameter: number): string {
  const tuples: string[] = [];
  let next = firstParameter;
  for (let r = 0; r < rowCount; r++) {
    const marks = columns.map(() => (placeholders === 'dollar' ? `$${next++}` : '?'));
    tuples.push(`(${marks.join(', ')})`);
  }
  return `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${tuples.join(', ')}`;
}

/** Runs `work` in one transaction; queued rows are flushed before commit and hooks run after it. */
export async function inUnit<T>(db: Db, work: (unit: Unit) => Promise<T>): Promise<T> {
  let unit: Unit | undefined;
  const placeholders = placeholderStyle(db);
  try {
    const result = await db.transaction().execute(async (tx) => {
      unit = new Unit(tx, placeholders);
      const value = await work(unit);
      await unit.flush();
      return value;
    });
    unit?.runHooks();
    return result;
  } catch (error) {
    unit?.runRollbackHooks();
    throw error;
  }
}

/** Runs `work`, which only queues rows, and writes them atomically in as few round trips as the store allows. */
export async function inInsertUnit<T>(db: Db, work: (unit: InsertUnit) => Promise<T>): Promise<T> {
  const unit = new InsertUnit();
  try {
    const value = await work(unit);
    const statements = unit.statements(placeholderStyle(db));
    if (!isPostgres(db)) await runInSqliteThread(db, statements);
    else if (statements.length === 1) await db.executeQuery(statements[0]);
    else if (statements.length > 1) {
      await db.transaction().execute(async (tx) => {
        for (const statement of statements) await tx.executeQuery(statement);
      });
    }
    unit.runHooks();
    return value;
  } catch (error) {
    unit.runRollbackHooks();
    throw error;
  }
}

/**
 * Runs statements in one transaction in the store's SQLite thread, with one message there and back (a unit sent
 * statement by statement would hold the connection across as many turns of the event loop, and nothing else could
 * be sent meanwhile); answers the guard ids.
 */
export async function runInSqliteThread(db: Db, statements: ThreadStatement[], background = false): Promise<string[]> {
  if (statements.length === 0) return [];
  const thread = sqliteThreadOf(db);
  if (!thread) throw new Error('this store has no SQLite thread');
  const { guards } = await thread.runOutside(statements, true, background);
  return guards;
}

const styles = new WeakMap<Db, Placeholders>();

/** How the database's driver numbers parameters, read once from what Kysely itself compiles for it. */
function placeholderStyle(db: Db): Placeholders {
  let style = styles.get(db);
  if (!style) {
    style = db.selectFrom('instances').select('id').where('id', '=', '').compile().sql.includes('$1') ? 'dollar' : 'question';
    styles.set(db, style);
  }
  return style;
}
