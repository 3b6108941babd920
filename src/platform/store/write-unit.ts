// A write unit: statements, rows, and rows kept only where a guarding statement answered them; one statement on PostgreSQL.
import { CompiledQuery, type Compilable } from 'kysely';
import type { Db } from './types.js';
import { isPostgres } from './is-postgres.js';
import { insertOrder, maxJoinedParameters, maxRowsPerInsert, multiRowInsert, RowBuffer, runInSqliteThread, type BatchedTable, type RowSink } from './unit.js';
import type { ThreadStatement } from './sqlite-thread/protocol.js';
import { jsonGuardedInsert, jsonInsert } from './pg-json-insert.js';
import { columnsOf } from './row-columns.js';

/**
 * A unit that writes without reading back what it writes: statements run for their effect, rows to insert, and rows
 * (with their hooks) to insert only if a guarding statement answers their guard id, e.g. "the status rows and events
 * of the messages this UPDATE moved on". On PostgreSQL all of it is one statement (data-modifying WITH clauses,
 * atomic without BEGIN/COMMIT: one round trip); on SQLite one transaction, sent to the SQLite thread whole.
 */
export class WriteUnit extends RowBuffer {
  private readonly writes: CompiledQuery[] = [];
  private guard: CompiledQuery | undefined;
  private readonly guardedRows: { guard: string; table: BatchedTable; row: Record<string, unknown> }[] = [];
  private readonly guardedHooks: { guard: string; hook: () => void }[] = [];

  /** `db` builds the unit's statements (they run when the unit does). */
  constructor(readonly db: Db) {
    super();
  }

  /** A statement run for its effect (an UPDATE or DELETE of rows no other statement of the unit touches). */
  write(query: Compilable): void {
    this.writes.push(query.compile());
  }

  /** The statement deciding the guarded rows; it answers their guard ids (text) as column `id` (`returning id`). */
  guardBy(query: Compilable): void {
    if (this.guard) throw new Error('a write unit has one guarding statement');
    this.guard = query.compile();
  }

  /** Rows and hooks that count only if the guarding statement answers `guard`. */
  guarded(guard: string): RowSink {
    return {
      insert: (table, row) => {
        this.guardedRows.push({ guard, table, row: row as Record<string, unknown> });
      },
      afterCommit: (hook) => {
        this.guardedHooks.push({ guard, hook });
      },
      onRollback: (hook) => this.onRollback(hook),
    };
  }

  /** Runs the unit; answers the guard ids the guarding statement answered. */
  async run(background = false): Promise<Set<string>> {
    let guards: Set<string>;
    if (isPostgres(this.db)) {
      const joined = this.joined();
      if (joined) {
        const result = await this.db.executeQuery(joined);
        guards = new Set(this.guard ? result.rows.map((row) => String((row as { id: unknown }).id)) : []);
      } else {
        guards = await this.inTransaction();
      }
    } else {
      guards = new Set(await runInSqliteThread(this.db, this.threadStatements(), background));
    }
    for (const { guard, hook } of this.guardedHooks) if (guards.has(guard)) this.afterCommit(hook);
    return guards;
  }

  /** The unit statement by statement in one PostgreSQL transaction (a unit too large for one statement). */
  private async inTransaction(): Promise<Set<string>> {
    return this.db.transaction().execute(async (tx) => {
      for (const statement of this.writes) await tx.executeQuery(statement);
      const ids = new Set<string>();
      if (this.guard) for (const row of (await tx.executeQuery(this.guard)).rows) ids.add(String((row as { id: unknown }).id));
      for (const { guard, table, row } of this.guardedRows) if (ids.has(guard)) this.rows[table].push(row as never);
      for (const statement of this.takeInserts('dollar')) await tx.executeQuery(statement);
      return ids;
    });
  }

  /**
   * The unit as statements for the SQLite thread, run there in one transaction: writes, the guard, then each table's
   * rows (the guarded ones kept where the guard answered their guard id, as on PostgreSQL).
   */
  private threadStatements(): ThreadStatement[] {
    const statements: ThreadStatement[] = this.writes.map((statement) => ({ sql: statement.sql, parameters: statement.parameters }));
    if (this.guard) statements.push({ sql: this.guard.sql, parameters: this.guard.parameters, role: 'guard' });
    for (const table of insertOrder) {
      const rows = this.rows[table] as Record<string, unknown>[];
      for (let i = 0; i < rows.length; i += maxRowsPerInsert) {
        const insert = multiRowInsert(table, rows.slice(i, i + maxRowsPerInsert), 'question', 1);
        statements.push({ sql: insert.sql, parameters: insert.parameters });
      }
      rows.length = 0;
      const guarded = this.guardedRows.filter((entry) => entry.table === table);
      for (let i = 0; i < guarded.length; i += maxRowsPerInsert) {
        statements.push({ ...sqliteGuardedInsert(table, guarded.slice(i, i + maxRowsPerInsert)), role: 'guarded' });
      }
    }
    for (const upsert of this.takeUpserts('question')) statements.push({ sql: upsert.sql, parameters: upsert.parameters });
    return statements;
  }

  /**
   * The whole unit as one PostgreSQL statement, or undefined when it is too large for one: writes and the guard as
   * WITH clauses, then the inserts, the guarded ones as INSERT … SELECT from VALUES filtered by the guard's answer.
   */
  private joined(): CompiledQuery | undefined {
    const types = columnTypes.get(this.db);
    const clauses: string[] = [];
    const parameters: unknown[] = [];
    // Each statement was numbered from $1: numbered on after the ones before it. (Our statements hold no literal "$n".)
    const append = (statement: CompiledQuery, numberedFrom = 1): string => {
      const shift = parameters.length + 1 - numberedFrom;
      for (const value of statement.parameters) parameters.push(value);
      return shift === 0 ? statement.sql : statement.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + shift}`);
    };
    this.writes.forEach((statement, i) => {
      clauses.push(`s${i} as (${append(statement)})`);
    });
    if (this.guard) clauses.push(`g as (${append(this.guard)})`);
    for (const table of insertOrder) {
      const rows = this.rows[table] as Record<string, unknown>[];
      // All of a table's rows as one JSON value where they can go so (see pg-json-insert.ts), else as VALUES.
      const asJson = rows.length > 0 ? jsonInsert(table, rows, parameters.length + 1) : undefined;
      if (asJson) clauses.push(`w${clauses.length} as (${append(asJson, parameters.length + 1)})`);
      for (let i = 0; !asJson && i < rows.length; i += maxRowsPerInsert) {
        // Numbered on from the parameters before it as it is written (no renumbering of a long VALUES list).
        const first = parameters.length + 1;
        clauses.push(`w${clauses.length} as (${append(multiRowInsert(table, rows.slice(i, i + maxRowsPerInsert), 'dollar', first), first)})`);
      }
      const guarded = this.guardedRows.filter((entry) => entry.table === table);
      const guardedJson = guarded.length > 0 ? jsonGuardedInsert(table, guarded, parameters.length + 1) : undefined;
      if (guardedJson) clauses.push(`w${clauses.length} as (${append(guardedJson, parameters.length + 1)})`);
      for (let i = 0; !guardedJson && i < guarded.length; i += maxRowsPerInsert) {
        if (!types) return undefined;
        clauses.push(`w${clauses.length} as (${append(guardedInsert(table, guarded.slice(i, i + maxRowsPerInsert), types))})`);
      }
    }
    // Upserts last, each numbered from $1 (renumbered on as appended); kept for `inTransaction` if the unit is too large.
    const upserts = this.upserts.peek((table, rows) => multiRowInsert(table, rows, 'dollar', 1), maxRowsPerInsert);
    for (const upsert of upserts) clauses.push(`w${clauses.length} as (${append(upsert)})`);
    if (parameters.length > maxJoinedParameters || clauses.length === 0) return undefined;
    this.upserts.clear();
    for (const table of insertOrder) this.rows[table].length = 0;
    return CompiledQuery.raw(`with ${clauses.join(', ')} select ${this.guard ? 'id from g' : '1'}`, parameters);
  }
}

/** Runs `work`, which only queues writes and rows, as one atomic write (see `WriteUnit`); answers the guard ids. */
export async function inWriteUnit(db: Db, work: (unit: WriteUnit) => void, options: { background?: boolean } = {}): Promise<Set<string>> {
  const unit = new WriteUnit(db);
  try {
    work(unit);
    const guards = await unit.run(options.background);
    unit.runHooks();
    return guards;
  } catch (error) {
    unit.runRollbackHooks();
    throw error;
  }
}

/** PostgreSQL column types by table and column, read once when the store opens (casts in INSERT … SELECT). */
export type ColumnTypes = Map<string, Map<string, string>>;
const columnTypes = new WeakMap<Db, ColumnTypes>();

export function registerColumnTypes(db: Db, types: ColumnTypes): void {
  columnTypes.set(db, types);
}

/**
 * INSERT … SELECT of rows from VALUES that carry their guard id first, kept where the guarding clause `g` answered
 * it. Parameters in VALUES have no type of their own, so the first row casts each to its column's type.
 */
function guardedInsert(table: BatchedTable, entries: { guard: string; row: Record<string, unknown> }[], types: ColumnTypes): CompiledQuery {
  const columns = columnsOf(entries.map((entry) => entry.row));
  const tableTypes = types.get(table);
  const casts = columns.map((column) => {
    const type = tableTypes?.get(column);
    if (!type) throw new Error(`no column type known for ${table}.${column}`);
    return `::${type}`;
  });
  const parameters: unknown[] = [];
  const tuples: string[] = [];
  for (const [r, { guard, row }] of entries.entries()) {
    parameters.push(guard);
    const marks = [`$${parameters.length}${r === 0 ? '::text' : ''}`];
    columns.forEach((column, c) => {
      const value = row[column];
      parameters.push(value === undefined ? null : value);
      marks.push(`$${parameters.length}${r === 0 ? casts[c] : ''}`);
    });
    tuples.push(`(${marks.join(', ')})`);
  }
  const list = columns.map((c) => `"${c}"`).join(', ');
  return CompiledQuery.raw(
    `insert into "${table}" (${list}) select ${list} from (values ${tuples.join(', ')}) as v("guard__", ${list}) where "guard__" in (select id from g)`,
    parameters,
  );
}

/**
 * SQLite's INSERT … SELECT of rows from VALUES that carry their guard id first (VALUES names its columns column1,
 * column2, …), kept where the guard answered it: the thread binds the guard's ids, as a JSON array, last.
 */
function sqliteGuardedInsert(table: BatchedTable, entries: { guard: string; row: Record<string, unknown> }[]): { sql: string; parameters: unknown[] } {
  const columns = columnsOf(entries.map((entry) => entry.row));
  const parameters: unknown[] = [];
  const tuple = `(${['?', ...columns.map(() => '?')].join(', ')})`;
  for (const { guard, row } of entries) {
    parameters.push(guard);
    for (const column of columns) {
      const value = row[column];
      parameters.push(value === undefined ? null : value);
    }
  }
  const list = columns.map((c) => `"${c}"`).join(', ');
  const picked = columns.map((_, c) => `column${c + 2}`).join(', ');
  return {
    sql: `insert into "${table}" (${list}) select ${picked} from (values ${entries.map(() => tuple).join(', ')}) where column1 in (select value from json_each(?))`,
    parameters,
  };
}
