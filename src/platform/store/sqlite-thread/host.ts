// The store's SQLite connection, held by a thread of its own: statements run there, off the service's event loop.
import { Worker } from 'node:worker_threads';
import { threadEntry } from '../../util/thread-entry.js';
import type { FromThread, StatementResult, ThreadSettings, ThreadStatement, ToThread, WireStatement } from './protocol.js';

/** SQL texts numbered at most; past that, numbering starts over (our statements come in far fewer shapes). */
const maxNumberedTexts = 5_000;

/** A failure the SQLite thread reported, with SQLite's error code (e.g. `SQLITE_CONSTRAINT_UNIQUE`) when it had one. */
class SqliteThreadError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'SqliteError';
  }
}

interface Waiting {
  resolve: (answer: { results: StatementResult[]; guards: string[] }) => void;
  reject: (error: Error) => void;
  background: boolean;
}

/** A request not yet sent: its SQL texts are numbered when it is sent, so a text always goes before its number. */
interface Unsent {
  id: number;
  statements: ThreadStatement[];
  atomic: boolean;
}

/** Longest a background request waits for the foreground requests in flight to be answered (ms). */
const maxBackgroundWaitMs = 5;

/**
 * Runs statements on the thread's connection, one request at a time in the order sent. One connection means one
 * transaction at a time: whoever opens one holds the lock (`lock`/`unlock`) until it ends, and requests sent while it
 * is held belong to that transaction; everyone else sends through `runOutside`.
 */
export class SqliteThread {
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();
  private closedWith: Error | undefined;
  private held: Promise<void> | undefined;
  private release: (() => void) | undefined;
  /** Numbers of the SQL texts already sent to the thread. */
  private readonly textIds = new Map<string, number>();
  /** Requests of this turn of the event loop, sent together when its microtasks have run. */
  private outgoing: ToThread[] = [];
  /** Foreground requests sent and not yet answered. */
  private foregroundInFlight = 0;
  /** Background requests held back while foreground requests are in flight, in the order made. */
  private heldBack: Unsent[] = [];
  private heldBackTimer: NodeJS.Timeout | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (answers: FromThread[]) => {
      for (const answer of answers) this.answer(answer);
    });
    worker.on('error', (error) => this.fail(new Error(`SQLite thread failed: ${error.message}`)));
    worker.on('exit', () => this.fail(new Error('SQLite thread has stopped (store closed)')));
    worker.unref();
  }

  /** Starts the thread and opens the database in it; rejects with SQLite's own error when it cannot be opened. */
  static async open(settings: ThreadSettings): Promise<SqliteThread> {
    const { entry, evaluate } = threadEntry(import.meta.url, 'entry');
    const worker = new Worker(entry, { workerData: settings, eval: evaluate });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (message: FromThread) => {
        if (message.type === 'ready') done(undefined);
        else if (message.type === 'open-failed') done(new SqliteThreadError(`cannot open SQLite database ${settings.path}: ${message.message}`, message.code));
      };
      const onError = (error: Error) => done(error);
      const onExit = () => done(new Error(`cannot open SQLite database ${settings.path}: its thread stopped`));
      const done = (error: Error | undefined) => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (error) {
          void worker.terminate();
          reject(error);
        } else resolve();
      };
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
    });
    return new SqliteThread(worker);
  }

  /**
   * Runs the statements in order (all or none when `atomic`); answers each one's result and the guard ids. Sent at
   * once: for the holder of the lock, or through `runOutside`. A `background` request (work no client waits for,
   * such as the send worker's bookkeeping) is held back while foreground requests are in flight, at most a few ms,
   * so requests that answer clients do not queue behind it in the thread; background requests keep their order.
   */
  run(statements: ThreadStatement[], atomic: boolean, background = false): Promise<{ results: StatementResult[]; guards: string[] }> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.waiting.size === 0) this.worker.ref();
      this.waiting.set(id, { resolve, reject, background });
      const request = { id, statements, atomic };
      if (background && (this.foregroundInFlight > 0 || this.heldBack.length > 0)) this.holdBack(request);
      else this.sendRun(request, background);
    });
  }

  private sendRun({ id, statements, atomic }: Unsent, background: boolean): void {
    if (!background) this.foregroundInFlight++;
    let forgetTexts: true | undefined;
    if (this.textIds.size > maxNumberedTexts) {
      this.textIds.clear();
      forgetTexts = true;
    }
    const wire = statements.map((statement) => this.wire(statement));
    this.send({ type: 'run', id, statements: wire, atomic, forgetTexts });
  }

  private holdBack(request: Unsent): void {
    this.heldBack.push(request);
    this.heldBackTimer ??= setTimeout(() => this.releaseHeldBack(), maxBackgroundWaitMs);
  }

  /** Sends the background requests held back, in order. */
  private releaseHeldBack(): void {
    if (this.heldBackTimer) clearTimeout(this.heldBackTimer);
    this.heldBackTimer = undefined;
    for (const request of this.heldBack.splice(0)) this.sendRun(request, true);
  }

  /**
   * Queues a request behind the others of this turn; they go as one message once the turn's microtasks have run
   * (each message costs a fixed share of the event loop, whatever it holds). Order is kept.
   */
  private send(message: ToThread): void {
    this.outgoing.push(message);
    if (this.outgoing.length === 1) queueMicrotask(() => this.flush());
  }

  private flush(): void {
    if (this.outgoing.length === 0) return;
    const messages = this.outgoing;
    this.outgoing = [];
    this.worker.postMessage(messages);
  }

  private wire({ sql, parameters, role }: ThreadStatement): WireStatement {
    let textId = this.textIds.get(sql);
    let text: string | undefined;
    if (textId === undefined) {
      textId = this.textIds.size + 1;
      this.textIds.set(sql, textId);
      text = sql;
    }
    return { textId, text, parameters, role };
  }

  /**
   * Runs statements outside any transaction (see `run`): once no transaction holds the connection, they are sent at
   * once, without holding it while they run, so several such requests can be in flight. The thread runs requests in
   * the order sent, so a transaction begun later waits behind them.
   */
  async runOutside(statements: ThreadStatement[], atomic: boolean, background = false): Promise<{ results: StatementResult[]; guards: string[] }> {
    while (this.held) await this.held;
    return this.run(statements, atomic, background);
  }

  /** Waits until no transaction holds the connection, then holds it (for a transaction: `run` until `unlock`). */
  async lock(): Promise<void> {
    // A transaction goes after every request made before it, the held-back ones too.
    this.releaseHeldBack();
    while (this.held) await this.held;
    this.held = new Promise((resolve) => (this.release = resolve));
  }

  unlock(): void {
    const release = this.release;
    this.held = undefined;
    this.release = undefined;
    release?.();
  }

  /**
   * Closes the database once the requests already sent have run; later requests are refused. A transaction still
   * open then is rolled back (as closing a connection does).
   */
  async close(): Promise<void> {
    if (this.closedWith) return;
    this.closedWith = new Error('SQLite store is closed');
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.ref();
    this.releaseHeldBack();
    this.send({ type: 'close', id: this.nextId++ });
    this.flush();
    const timer = setTimeout(() => void this.worker.terminate(), 5_000);
    await exited;
    clearTimeout(timer);
  }

  private answer(message: FromThread): void {
    if (message.type !== 'done' && message.type !== 'failed') return;
    const waiting = this.waiting.get(message.id);
    if (!waiting) return;
    this.waiting.delete(message.id);
    if (!waiting.background) {
      this.foregroundInFlight--;
      if (this.foregroundInFlight === 0 && this.heldBack.length > 0) this.releaseHeldBack();
    }
    if (this.waiting.size === 0) this.worker.unref();
    if (message.type === 'failed') {
      waiting.reject(new SqliteThreadError(message.message, message.code));
      return;
    }
    if (message.blobs) for (const result of message.results) if (result.rows) asBuffers(result.rows);
    waiting.resolve({ results: message.results, guards: message.guards });
  }

  /** The thread is gone: everything waiting fails, and so does everything asked later. */
  private fail(error: Error): void {
    this.closedWith ??= error;
    if (this.heldBackTimer) clearTimeout(this.heldBackTimer);
    this.heldBackTimer = undefined;
    this.heldBack = [];
    for (const waiting of this.waiting.values()) waiting.reject(error);
    this.waiting.clear();
  }
}

/** BLOB values arrive as plain Uint8Arrays; the store's callers read them as Buffers (as the driver gives them). */
function asBuffers(rows: Record<string, unknown>[]): void {
  for (const row of rows) {
    for (const key in row) {
      const value = row[key];
      if (value instanceof Uint8Array && !Buffer.isBuffer(value)) row[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    }
  }
}
