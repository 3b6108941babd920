// Messages between the store and its SQLite thread, and the settings the thread opens the database with.

export interface ThreadSettings {
  /** A file path, or `:memory:`. */
  path: string;
  /** Pragmas run once the database is open, in order (e.g. `journal_mode = WAL`). */
  pragmas: string[];
}

/**
 * One statement of a request. `guard`: its rows' `id` values (as text) are the request's guard ids. `guarded`: a
 * JSON array of those ids is bound as its last parameter (a statement that keeps only the rows of guards that
 * answered, e.g. `… where column1 in (select value from json_each(?))`); it must come after the guard.
 */
export interface ThreadStatement {
  sql: string;
  parameters: readonly unknown[];
  role?: 'guard' | 'guarded';
}

/** What a statement answered: its rows when it returns rows, else what it changed. */
export interface StatementResult {
  rows: Record<string, unknown>[] | undefined;
  changes: number;
  lastInsertRowid: number | bigint;
}

/**
 * A statement as sent: its SQL text by number, the text itself only the first time (copying long INSERT texts with
 * every request showed in profiles).
 */
export interface WireStatement {
  textId: number;
  text?: string;
  parameters: readonly unknown[];
  role?: 'guard' | 'guarded';
}

/** Sent as lists: the requests made in one turn of the event loop go in one message, and so do their answers. */
export type ToThread =
  /**
   * Runs the statements in order; `atomic`: all of them in one transaction, or none. `forgetTexts`: the numbers of
   * the SQL texts sent before this request are no longer used (numbering starts over).
   */
  { type: 'run'; id: number; statements: WireStatement[]; atomic: boolean; forgetTexts?: boolean } | { type: 'close'; id: number };

export type FromThread =
  | { type: 'ready' }
  | { type: 'open-failed'; message: string; code: string | undefined }
  /** `blobs`: some row holds a BLOB (it arrives as a Uint8Array, to be seen as a Buffer again). */
  | { type: 'done'; id: number; results: StatementResult[]; guards: string[]; blobs: boolean }
  | { type: 'failed'; id: number; message: string; code: string | undefined }
  | { type: 'closed'; id: number };
