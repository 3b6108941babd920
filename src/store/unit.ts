// A unit of work: one transaction, rows gathered for multi-row inserts, and hooks that run after commit.
import type { Insertable } from 'kysely';
import type { Db, Tx } from './db.js';
import type { Database } from './schema.js';

type BatchedTable = 'messages' | 'message_status' | 'send_queue' | 'outbox' | 'deliveries' | 'media_blobs';
// Insert order matters only for readability of the store; no foreign keys link these tables.
const insertOrder: BatchedTable[] = ['media_blobs', 'messages', 'message_status', 'send_queue', 'outbox', 'deliveries'];
const maxRowsPerInsert = 200;

export class Unit {
  private readonly rows: { [T in BatchedTable]: Insertable<Database[T]>[] } = {
    messages: [],
    message_status: [],
    send_queue: [],
    outbox: [],
    deliveries: [],
    media_blobs: [],
  };
  private readonly hooks: (() => void)[] = [];
  private readonly undo: (() => void)[] = [];

  constructor(readonly tx: Tx) {}

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

  /** Writes the queued rows now (use before a query that must see them). */
  async flush(): Promise<void> {
    for (const table of insertOrder) {
      const rows = this.rows[table];
      while (rows.length > 0) {
        const chunk = rows.splice(0, maxRowsPerInsert);
        // Kysely cannot narrow the union of table names to one row type here; each chunk holds rows of `table` only.
        await this.tx.insertInto(table).values(chunk as never).execute();
      }
    }
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
}

/** Runs `work` in one transaction; queued rows are flushed before commit and hooks run after it. */
export async function inUnit<T>(db: Db, work: (unit: Unit) => Promise<T>): Promise<T> {
  let unit: Unit | undefined;
  try {
    const result = await db.transaction().execute(async (tx) => {
      unit = new Unit(tx);
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
