// Webhook requests sent from a worker thread: lanes keep their pace however busy the service's own event loop is.
import { Worker } from 'node:worker_threads';
import { threadEntry } from '../../../platform/util/thread-entry.js';
import type { Logger } from '../../../platform/logger.js';
import type { Verdict } from '../outcome.js';
import type { OrderedSender, WebhookRequest } from '../ordered-send.js';
import type { FromThread, ThreadSettings, ToThread } from './protocol.js';

/** Wait before starting the thread again after it died unexpectedly. */
const restartDelayMs = 1_000;
/** How long a stop waits for the thread to abandon its requests before it is terminated. */
const stopTimeoutMs = 10_000;

export class ThreadSender implements OrderedSender {
  private worker: Worker | undefined;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private nextJob = 1;
  /** Jobs sent to the thread, answered by its `sent` messages. */
  private readonly jobs = new Map<number, (verdicts: Verdict[]) => void>();

  constructor(
    private readonly settings: ThreadSettings,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.stopping = false;
    if (!this.worker) this.spawn();
  }

  send(requests: WebhookRequest[], startBefore: number): Promise<Verdict[]> {
    const worker = this.worker;
    // No thread (stopping, or starting again after a crash): nothing is attempted, the lane tries again later.
    if (!worker || this.stopping) return Promise.resolve([]);
    const job = this.nextJob++;
    return new Promise((resolve) => {
      this.jobs.set(job, resolve);
      worker.postMessage({ type: 'send', job, requests, startBefore } satisfies ToThread);
    });
  }

  /** Requests in flight are abandoned (they answer `released`), then the thread ends. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const worker = this.worker;
    // Forgotten at once: a start() during this stop gets a thread of its own.
    this.worker = undefined;
    if (!worker) return;
    const ended = new Promise<void>((resolve) => {
      worker.on('message', (message: FromThread) => {
        if (message.type === 'stopped') resolve();
      });
      worker.once('exit', () => resolve());
    });
    worker.postMessage({ type: 'stop' } satisfies ToThread);
    const timer = setTimeout(() => void worker.terminate(), stopTimeoutMs);
    await ended;
    clearTimeout(timer);
    await worker.terminate();
    this.answerAll();
  }

  private spawn(): void {
    const { entry, evaluate } = threadEntry(import.meta.url, 'entry');
    const worker = new Worker(entry, { workerData: this.settings, eval: evaluate });
    this.worker = worker;
    worker.on('message', (message: FromThread) => {
      if (message.type !== 'sent') return;
      const answer = this.jobs.get(message.job);
      this.jobs.delete(message.job);
      answer?.(message.verdicts);
    });
    worker.on('error', (error) => this.logger.error({ err: error }, 'webhook sending thread failed'));
    worker.on('exit', (code) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.answerAll();
      if (this.stopping) return;
      this.logger.error({ code }, 'webhook sending thread exited; starting it again');
      this.restartTimer = setTimeout(() => {
        if (!this.stopping && !this.worker) this.spawn();
      }, restartDelayMs);
      this.restartTimer.unref();
    });
  }

  /** Jobs the thread will never answer: nothing of them counts as attempted. */
  private answerAll(): void {
    for (const answer of this.jobs.values()) answer([]);
    this.jobs.clear();
  }
}
