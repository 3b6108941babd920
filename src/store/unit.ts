// A unit of work: one transaction, rows gathered for multi-row inserts, and hooks that run after commit.
import { CompiledQuery, type Compilable, type Insertable } from 'kysely';
import type { Db, Tx } from './db.js';
import type { Database } from './schema.js';

export type BatchedTable = 'messages' | 'message_status' | 'send_queue' | 'outbox' | 'deliveries' | 'media_blobs';
// Insert order matters only for readability of the store; no foreign keys link these tables.
const insertOrder: BatchedTable[] = ['media_blobs', 'messages', 'message_status', 'send_queue', 'outbox', 'deliveries'];
const maxRowsPerInsert = 200;

/** What writing an event or a row needs of a unit: rows inserted with it, hooks after its commit or rollback. */
export interface RowSink {
  insert<T extends BatchedTable>(table: T, row: Insertable<Database[T]>): void;
  afterCommit(hook: () => void): void;
  onRollback(hook: () => void): void;
}

/** Rows to insert and hooks to run once they are committed: the part of a unit that needs no open transaction. */
export class RowBuffer implements RowSink {
  protected readonly rows: { [T in BatchedTable]: Insertable<Database[T]>[] } = {
    messages: [],
    message_status: [],
    send_queue: [],
    outbox: [],
    deliveries: [],
    media_blobs: [],
  };
  private readonly hooks: (() => void)[] = [];
  private readonly undo: (() => void)[] = [];

  /** Queues a row; all queued rows are inserted together before the transaction commits. */
  insert<T extends BatchedTable>(table: T, row: Insertable<Database[T]>): void {
    this.rows[table].push(row);
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
      while (rows.length > 0) {
        const statement = multiRowInsert(table, rows.splice(0, maxRowsPerInsert), placeholders, next);
        if (joined) next += statement.parameters.length;
        statements.push(statement);
      }
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

const maxJoinedParameters = 60_000;

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
function multiRowInsert(table: string, rows: Record<string, unknown>[], placeholders: Placeholders, firstParameter: number): CompiledQuery {
  const first = rows[0];
  const columns = Object.keys(first);
  // Rows of a table mostly share their columns; any other column a row has is added (null for the rows without it).
  let known: Set<string> | undefined;
  for (let r = 1; r < rows.length; r++) {
    for (const column in rows[r]) {
      if (column in first) continue;
      known ??= new Set(columns);
      if (!known.has(column)) {
        known.add(column);
        columns.push(column);
      }
    }
  }
  const parameters: unknown[] = new Array(rows.length * columns.length);
  let i = 0;
  for (const row of rows) {
    for (const column of columns) {
      const value = row[column];
      parameters[i++] = value === undefined ? null : value;
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
    if (statements.length === 1) await db.executeQuery(statements[0]);
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

/**
 * A unit that writes without reading back what it writes: statements run for their effect, rows to insert, and rows
 * (with their hooks) to insert only if a guarding statement answers their guard id, e.g. "the status rows and events
 * of the messages this UPDATE moved on". On PostgreSQL all of it is one statement (data-modifying WITH clauses,
 * atomic without BEGIN/COMMIT: one round trip); on SQLite one transaction.
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

  /** A statement run for its effect (an UPDATE or DELETE of a table no other statement of the unit touches). */
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
  async run(): Promise<Set<string>> {
    const joined = placeholderStyle(this.db) === 'dollar' ? this.joined() : undefined;
    let guards: Set<string>;
    if (joined) {
      const result = await this.db.executeQuery(joined);
      guards = new Set(this.guard ? result.rows.map((row) => String((row as { id: unknown }).id)) : []);
    } else {
      guards = await this.db.transaction().execute(async (tx) => {
        for (const statement of this.writes) await tx.executeQuery(statement);
        const ids = new Set<string>();
        if (this.guard) for (const row of (await tx.executeQuery(this.guard)).rows) ids.add(String((row as { id: unknown }).id));
        for (const { guard, table, row } of this.guardedRows) if (ids.has(guard)) this.rows[table].push(row as never);
        for (const statement of this.takeInserts(placeholderStyle(this.db))) await tx.executeQuery(statement);
        return ids;
      });
    }
    for (const { guard, hook } of this.guardedHooks) if (guards.has(guard)) this.afterCommit(hook);
    return guards;
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
    this.writes.forEach((statement, i) => clauses.push(`s${i} as (${append(statement)})`));
    if (this.guard) clauses.push(`g as (${append(this.guard)})`);
    for (const table of insertOrder) {
      const rows = this.rows[table] as Record<string, unknown>[];
      for (let i = 0; i < rows.length; i += maxRowsPerInsert) {
        // Numbered on from the parameters before it as it is written (no renumbering of a long VALUES list).
        const first = parameters.length + 1;
        clauses.push(`w${clauses.length} as (${append(multiRowInsert(table, rows.slice(i, i + maxRowsPerInsert), 'dollar', first), first)})`);
      }
      const guarded = this.guardedRows.filter((entry) => entry.table === table);
      for (let i = 0; i < guarded.length; i += maxRowsPerInsert) {
        if (!types) return undefined;
        clauses.push(`w${clauses.length} as (${append(guardedInsert(table, guarded.slice(i, i + maxRowsPerInsert), types))})`);
      }
    }
    if (parameters.length > maxJoinedParameters || clauses.length === 0) return undefined;
    for (const table of insertOrder) this.rows[table].length = 0;
    return CompiledQuery.raw(`with ${clauses.join(', ')} select ${this.guard ? 'id from g' : '1'}`, parameters);
  }
}

/** Runs `work`, which only queues writes and rows, as one atomic write (see `WriteUnit`); answers the guard ids. */
export async function inWriteUnit(db: Db, work: (unit: WriteUnit) => void): Promise<Set<string>> {
  const unit = new WriteUnit(db);
  try {
    work(unit);
    const guards = await unit.run();
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
  const columns = [...new Set(entries.flatMap((entry) => Object.keys(entry.row)))];
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
