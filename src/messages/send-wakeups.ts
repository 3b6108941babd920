// Wakes the send worker of an instance wherever it runs: at once on this node, by a store signal on the others.
import { randomUUID } from 'node:crypto';
import type { StoreSignals } from '../platform/store/signals.js';

/** The send workers as wake-ups reach them (both no-ops for an instance whose worker does not run here). */
interface WakeableWorkers {
  wake(instanceId: string): void;
  wakeChat(instanceId: string, chat: string): void;
}

/** The signal channel of accepted sends. */
const channel = 'sends';
/** An instance with more chats than this in one batch is woken whole (one scan of its queue) instead of chat by chat. */
const chatsPerInstance = 8;
/** PostgreSQL takes payloads under 8000 bytes: a batch with more to tell goes as several signals. */
const maxPayloadChars = 7_000;

/** One signal: who sent it (its own signals a node has acted on already), and per instance its chats (empty: all). */
interface WakeSignal {
  from: string;
  wake: [instanceId: string, chats: string[]][];
}

export interface SendWakeupsOptions {
  workers: WakeableWorkers;
  /** Where other nodes hear of accepted sends; none: this node is the only one (SQLite). */
  signals?: StoreSignals;
  onError(error: unknown): void;
}

/**
 * Accepted sends wake their worker: this node's at once (as before), the other nodes' by one signal per committed batch
 * (gathered until the batch's after-commit hooks have run), sent without holding anything up.
 */
export class SendWakeups {
  private readonly origin = randomUUID();
  private readonly pending = new Map<string, Set<string>>();
  private flushing = false;
  /** Whether other nodes may be alive (until a heartbeat says this node is alone: then nobody else needs telling). */
  private others = true;
  private readonly unlisten: (() => void) | undefined;

  constructor(private readonly options: SendWakeupsOptions) {
    this.unlisten = options.signals?.listen(channel, (payload) => this.heard(payload));
  }

  /** A send for `chat` of the instance committed. */
  accepted(instanceId: string, chat: string): void {
    this.options.workers.wakeChat(instanceId, chat);
    if (!this.options.signals || !this.others) return;
    let chats = this.pending.get(instanceId);
    if (!chats) {
      chats = new Set();
      this.pending.set(instanceId, chats);
    }
    chats.add(chat);
    if (this.flushing) return;
    this.flushing = true;
    // The hooks of one committed batch run one after the other: the batch's sends are all told by one signal.
    queueMicrotask(() => this.flush());
  }

  /** The live nodes as the last heartbeat found them (this one included). */
  liveNodes(count: number): void {
    this.others = count > 1;
  }

  stop(): void {
    this.unlisten?.();
    this.pending.clear();
  }

  private flush(): void {
    this.flushing = false;
    const signals = this.options.signals;
    if (!signals) return;
    let wake: WakeSignal['wake'] = [];
    let size = 0;
    const send = () => {
      const payload: WakeSignal = { from: this.origin, wake };
      signals.send(channel, JSON.stringify(payload)).catch(this.options.onError);
      wake = [];
      size = 0;
    };
    for (const [instanceId, chats] of this.pending) {
      const entry: [string, string[]] = [instanceId, chats.size > chatsPerInstance ? [] : [...chats]];
      const entrySize = JSON.stringify(entry).length + 1;
      if (size + entrySize > maxPayloadChars && wake.length > 0) send();
      wake.push(entry);
      size += entrySize;
    }
    this.pending.clear();
    if (wake.length > 0) send();
  }

  private heard(payload: string): void {
    let signal: WakeSignal;
    try {
      signal = JSON.parse(payload) as WakeSignal;
    } catch {
      return; // Not ours to read (a hint only: the worker's poll finds the send anyway).
    }
    if (signal.from === this.origin || !Array.isArray(signal.wake)) return;
    const { workers } = this.options;
    for (const [instanceId, chats] of signal.wake) {
      if (chats.length === 0) workers.wake(instanceId);
      else for (const chat of chats) workers.wakeChat(instanceId, chat);
    }
  }
}
