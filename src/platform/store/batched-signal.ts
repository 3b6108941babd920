// A signal per committed batch: what one node's after-commit hooks gather per instance, told to the other nodes at once.
import { randomUUID } from 'node:crypto';
import type { StoreSignals } from './signals.js';

/** PostgreSQL takes payloads under 8000 bytes: a batch with more to tell goes as several signals. */
export const maxBatchPayloadChars = 7_000;

export interface BatchedSignalOptions<Entry, Item> {
  /** Where the other nodes hear; none: this node is the only one (SQLite), nothing is gathered. */
  signals?: StoreSignals;
  channel: string;
  /** The payload's field that holds the items (with `from`, the sending node), as the channel's readers expect it. */
  field: string;
  /** An instance's entry, new when the batch first gathers for the instance. */
  entry(): Entry;
  /** The batch's entries as the items of each signal to send, each signal's items under `maxBatchPayloadChars`. */
  pack(entries: Map<string, Entry>): Item[][];
  /** Items another node told. */
  heard(items: Item[]): void;
  /** A signal not sent (a hint: by default nothing is said). */
  onError?(error: unknown): void;
}

/**
 * Gathers per instance until the hooks of one committed batch have run (they run one after the other), then sends the
 * batch as one signal (several when it is large) without holding anything up. A node ignores its own signals.
 */
export class BatchedSignal<Entry, Item> {
  private readonly origin = randomUUID();
  private readonly pending = new Map<string, Entry>();
  private flushing = false;
  /** Whether other nodes may be alive (until a heartbeat says this node is alone: then nobody else needs telling). */
  private others = true;
  private unlisten: (() => void) | undefined;

  constructor(private readonly options: BatchedSignalOptions<Entry, Item>) {
    this.unlisten = options.signals?.listen(options.channel, (payload) => this.receive(payload));
  }

  /** Adds to the instance's entry of the batch being gathered (nothing when no other node needs telling). */
  gather(instanceId: string, add: (entry: Entry) => void): void {
    if (!this.options.signals || !this.others) return;
    let entry = this.pending.get(instanceId);
    if (!entry) {
      entry = this.options.entry();
      this.pending.set(instanceId, entry);
    }
    add(entry);
    if (this.flushing) return;
    this.flushing = true;
    queueMicrotask(() => this.flush());
  }

  /** The live nodes as the last heartbeat found them (this one included). */
  liveNodes(count: number): void {
    this.others = count > 1;
  }

  stop(): void {
    this.unlisten?.();
    this.unlisten = undefined;
    this.pending.clear();
  }

  private flush(): void {
    this.flushing = false;
    const { signals, channel, field } = this.options;
    if (!signals) return;
    const batches = this.options.pack(this.pending);
    this.pending.clear();
    const onError = this.options.onError ?? (() => undefined);
    for (const items of batches) {
      signals.send(channel, JSON.stringify({ from: this.origin, [field]: items })).catch(onError);
    }
  }

  private receive(payload: string): void {
    let signal: Record<string, unknown>;
    try {
      signal = JSON.parse(payload) as Record<string, unknown>;
    } catch {
      return; // Not ours to read (a hint only).
    }
    const items = signal?.[this.options.field];
    if (signal?.from === this.origin || !Array.isArray(items)) return;
    this.options.heard(items as Item[]);
  }
}
