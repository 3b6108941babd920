// Wakes the send worker of an instance wherever it runs: at once on this node, by a store signal on the others.
import { BatchedSignal, maxBatchPayloadChars } from '../platform/store/batched-signal.js';
import type { StoreSignals } from '../platform/store/signals.js';

/** The send workers as wake-ups reach them (both no-ops for an instance whose worker does not run here). */
interface WakeableWorkers {
  wake(instanceId: string): void;
  wakeChat(instanceId: string, chat: string): void;
}

/** An instance with more chats than this in one batch is woken whole (one scan of its queue) instead of chat by chat. */
const chatsPerInstance = 8;

/** One instance to wake (a signal's `wake` holds these): its chats (empty: all). */
type Wake = [instanceId: string, chats: string[]];

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
  private readonly pending: BatchedSignal<Set<string>, Wake>;

  constructor(private readonly options: SendWakeupsOptions) {
    this.pending = new BatchedSignal({
      signals: options.signals,
      channel: 'sends',
      field: 'wake',
      entry: () => new Set<string>(),
      pack: (entries) => this.pack(entries),
      heard: (wake) => this.heard(wake),
      onError: options.onError,
    });
  }

  /** A send for `chat` of the instance committed. */
  accepted(instanceId: string, chat: string): void {
    this.options.workers.wakeChat(instanceId, chat);
    this.pending.gather(instanceId, (chats) => chats.add(chat));
  }

  /** The live nodes as the last heartbeat found them (this one included). */
  liveNodes(count: number): void {
    this.pending.liveNodes(count);
  }

  stop(): void {
    this.pending.stop();
  }

  /** A batch's sends as the wake-ups of each signal. */
  private pack(pending: Map<string, Set<string>>): Wake[][] {
    const signals: Wake[][] = [];
    let wake: Wake[] = [];
    let size = 0;
    for (const [instanceId, chats] of pending) {
      const entry: Wake = [instanceId, chats.size > chatsPerInstance ? [] : [...chats]];
      const entrySize = JSON.stringify(entry).length + 1;
      if (size + entrySize > maxBatchPayloadChars && wake.length > 0) {
        signals.push(wake);
        wake = [];
        size = 0;
      }
      wake.push(entry);
      size += entrySize;
    }
    if (wake.length > 0) signals.push(wake);
    return signals;
  }

  private heard(wake: Wake[]): void {
    const { workers } = this.options;
    for (const [instanceId, chats] of wake) {
      if (chats.length === 0) workers.wake(instanceId);
      else for (const chat of chats) workers.wakeChat(instanceId, chat);
    }
  }
}
