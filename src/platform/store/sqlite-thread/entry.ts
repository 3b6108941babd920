// The SQLite thread: owns the store's one SQLite connection and runs the statements the event loop sends it.
import { parentPort, workerData } from 'node:worker_threads';
import Database, { type Statement } from 'better-sqlite3';
import type { FromThread, StatementResult, ThreadSettings, ToThread, WireStatement } from './protocol.js';

if (!parentPort) throw new Error('the SQLite thread must run as a worker thread');
const port = parentPort;
const settings = workerData as ThreadSettings;
const tell = (message: FromThread) => port.postMessage(message);

/** Prepared statements kept by SQL text (least recently used out): the same few texts come back all the time. */
const maxCachedStatements = 500;
const statements = new Map<string, Statement>();

function prepared(db: Database.Database, sql: string): Statement {
  let statement = statements.get(sql);
  if (statement) {
    statements.delete(sql);
  } else {
    statement = db.prepare(sql);
    if (statements.size >= maxCachedStatements) statements.delete(statements.keys().next().value as string);
  }
  statements.set(sql, statement);
  return statement;
}

/** Buffers arrive as plain Uint8Arrays (structured clone); the driver binds Buffers. */
function bindable(parameters: readonly unknown[]): unknown[] {
  return parameters.map((value) =>
    value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value,
  );
}

function hasBlob(rows: Record<string, unknown>[]): boolean {
  for (const row of rows) for (const key in row) if (row[key] instanceof Uint8Array) return true;
  return false;
}

/** The database, opened with its pragmas; undefined (and the host told why) when it cannot be opened. */
function open(): Database.Database | undefined {
  try {
    const opened = new Database(settings.path);
    for (const pragma of settings.pragmas) opened.pragma(pragma);
    return opened;
  } catch (error) {
    const failure = error as { message?: string; code?: string };
    tell({ type: 'open-failed', message: String(failure.message ?? error), code: failure.code });
    return undefined;
  }
}

/** SQL texts by the number the host gave them. */
const texts = new Map<number, string>();

function textOf(statement: WireStatement): string {
  if (statement.text !== undefined) texts.set(statement.textId, statement.text);
  const text = texts.get(statement.textId);
  if (text === undefined) throw new Error(`SQL text ${statement.textId} was never sent`);
  return text;
}

/** Answers the host's requests on `db` (the host ends the thread when it could not be opened). */
function serve(db: Database.Database): void {
  function runAll(list: WireStatement[]): { results: StatementResult[]; guards: string[]; blobs: boolean } {
    const results: StatementResult[] = [];
    let guards: string[] = [];
    let blobs = false;
    for (const wire of list) {
      const { parameters, role } = wire;
      const statement = prepared(db, textOf(wire));
      const values = bindable(parameters);
      if (role === 'guarded') values.push(JSON.stringify(guards));
      if (statement.reader) {
        const rows = statement.all(values) as Record<string, unknown>[];
        if (role === 'guard') guards = rows.map((row) => String(row.id));
        blobs ||= hasBlob(rows);
        results.push({ rows, changes: 0, lastInsertRowid: 0 });
      } else {
        const { changes, lastInsertRowid } = statement.run(values);
        results.push({ rows: undefined, changes, lastInsertRowid });
      }
    }
    return { results, guards, blobs };
  }

  const runAtomically = db.transaction(runAll);

  /** Runs one request; answers what it did. */
  function handle(message: Extract<ToThread, { type: 'run' }>): FromThread {
    if (message.forgetTexts) texts.clear();
    try {
      const outcome = message.atomic ? runAtomically(message.statements) : runAll(message.statements);
      return { type: 'done', id: message.id, ...outcome };
    } catch (error) {
      const failure = error as { message?: string; code?: string };
      return { type: 'failed', id: message.id, message: String(failure.message ?? error), code: failure.code };
    }
  }

  // Requests come in lists (those the event loop made in one turn), and their answers go back as one list.
  port.on('message', (messages: ToThread[]) => {
    const answers: FromThread[] = [];
    for (const message of messages) {
      if (message.type === 'run') {
        answers.push(handle(message));
        continue;
      }
      try {
        db.close();
      } finally {
        answers.push({ type: 'closed', id: message.id });
        port.postMessage(answers);
        port.close();
      }
      return;
    }
    port.postMessage(answers);
  });
  tell({ type: 'ready' });
}

const db = open();
if (db) serve(db);
