// WAL checkpoints of the SQLite store, off the event loop and off the thread that runs the store's statements.
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';

// The checkpointer runs in its own thread with its own connection, so copying the WAL into the database file (and
// the fsync that goes with it) never blocks request handling. While writes keep coming it checkpoints every few ms:
// the WAL can only start over from its beginning when a write finds it wholly copied, and a WAL that never starts
// over grows without end (hundreds of MB in a 10 s burst), and every commit then extends the file and every read
// searches a larger WAL index. Idle, it backs off to one look per `idleMs`. CommonJS source, evaluated by the worker.
const checkpointerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 2000');
let delay = workerData.busyMs;
let lastLog = -1;
let timer;
const checkpoint = () => {
  let written = false;
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    written = result.log !== lastLog;
    lastLog = result.log;
  } catch (error) {
    parentPort.postMessage(String(error));
  }
  delay = written ? workerData.busyMs : Math.min(delay * 2, workerData.idleMs);
  timer = setTimeout(checkpoint, delay);
};
timer = setTimeout(checkpoint, delay);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearTimeout(timer);
  try { db.pragma('wal_checkpoint(TRUNCATE)'); } catch {}
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export interface CheckpointPace {
  /** Between checkpoints while the WAL keeps growing (ms). */
  busyMs: number;
  /** Longest wait between two looks while nothing is written (ms). */
  idleMs: number;
}

/** Starts WAL checkpoints of the database file at `path` in a worker thread. */
export function startCheckpointer(path: string, pace: CheckpointPace, onError: (message: string) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(checkpointerSource, { eval: true, workerData: { driver, path, busyMs: pace.busyMs, idleMs: pace.idleMs } });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  worker.on('message', (message: unknown) => onError(String(message)));
  worker.on('error', (error) => onError(String(error)));
  worker.unref();
  return {
    async stop() {
      if (exited) return;
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), 3000);
      await exit;
      clearTimeout(timer);
    },
  };
}
