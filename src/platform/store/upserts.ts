// Rows written as merged upserts: one row per key and unit, inserted, or merged into the stored row when it exists.
import { CompiledQuery } from 'kysely';

/** The tables written by upserts. */
export type UpsertTable = 'chats' | 'contacts';

/** How rows of a table are upserted. */
export interface UpsertSpec {
  table: UpsertTable;
  /** The columns of the unique index a row may collide on. */
  conflict: readonly string[];
  /** The SET list for a row that exists (`excluded.<column>` is the new row's value); SQL both stores take. */
  set: string;
}

/** Merges a row into the one queued before it with the same key (same unit). */
export type RowMerge = (queued: Record<string, unknown>, next: Record<string, unknown>) => Record<string, unknown>;

/** The rows of one unit, per upsert spec and key; a key given again is merged into its row. */
export class UpsertRows {
  private readonly bySpec = new Map<UpsertSpec, Map<string, Record<string, unknown>>>();

  add(spec: UpsertSpec, key: string, row: Record<string, unknown>, merge?: RowMerge): void {
    let rows = this.bySpec.get(spec);
    if (!rows) {
      rows = new Map();
      this.bySpec.set(spec, rows);
    }
    const queued = rows.get(key);
    rows.set(key, queued && merge ? merge(queued, row) : row);
  }

  /**
   * The rows as upsert statements (`insert` writes the INSERT of a chunk of rows), taken out of the unit. Rows go in
   * key order, so two units upserting the same rows lock them in the same order (no deadlock on PostgreSQL).
   */
  take(insert: (table: UpsertTable, rows: Record<string, unknown>[]) => CompiledQuery, rowsPerStatement: number): CompiledQuery[] {
    const statements = this.peek(insert, rowsPerStatement);
    this.clear();
    return statements;
  }

  /** The statements `take` would answer, the rows left in the unit. */
  peek(insert: (table: UpsertTable, rows: Record<string, unknown>[]) => CompiledQuery, rowsPerStatement: number): CompiledQuery[] {
    const statements: CompiledQuery[] = [];
    for (const [spec, byKey] of this.bySpec) {
      const rows = [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
      const onConflict = ` on conflict (${spec.conflict.map((c) => `"${c}"`).join(', ')}) do update set ${spec.set}`;
      for (let i = 0; i < rows.length; i += rowsPerStatement) {
        const statement = insert(spec.table, rows.slice(i, i + rowsPerStatement));
        statements.push(CompiledQuery.raw(statement.sql + onConflict, [...statement.parameters]));
      }
    }
    return statements;
  }

  clear(): void {
    this.bySpec.clear();
  }
}
