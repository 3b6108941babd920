// Tells every node of the store that events were committed to the outbox (a hint: readers poll the outbox as well).
import type { Logger } from '../platform/logger.js';
import type { StoreSignals } from '../platform/store/signals.js';

const channel = 'outbox_committed';

/** Where outbox readers (websocket delivery, broker relays) hear of new events, whichever node wrote them. */
export interface OutboxCommits {
  /** Calls `listener` after events were committed on any node (or after signals may have been missed); answers how to stop. */
  onCommitted(listener: () => void): () => void;
}

export class OutboxSignal implements OutboxCommits {
  private sending = false;
  private again = false;
  private readonly resyncListeners = new Set<() => void>();

  constructor(
    private readonly signals: StoreSignals,
    private readonly logger: Logger,
  ) {
    signals.onResync(() => {
      for (const listener of this.resyncListeners) listener();
    });
  }

  /** Events were committed on this node. Sends coalesce: one in flight at a time, one more for what came meanwhile. */
  committed(): void {
    if (this.sending) {
      this.again = true;
      return;
    }
    this.sending = true;
    void this.signals
      .send(channel, '')
      .catch((error: unknown) => this.logger.debug({ err: error }, 'outbox signal not sent; readers find the events at their next poll'))
      .finally(() => {
        this.sending = false;
        if (this.again) {
          this.again = false;
          this.committed();
        }
      });
  }

  onCommitted(listener: () => void): () => void {
    const stop = this.signals.listen(channel, () => listener());
    this.resyncListeners.add(listener);
    return () => {
      stop();
      this.resyncListeners.delete(listener);
    };
  }
}
