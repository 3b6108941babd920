// Receipts Meta sent before the send they are about had its wamid recorded (the webhook can beat Graph's answer).
import type { MessageStatus } from '../../core/message-status.js';

interface Held {
  statuses: { status: MessageStatus; detail?: string }[];
  until: number;
}

/** How long a receipt for an unknown wamid waits for its send; after that it belongs to another tool's message. */
const holdMs = 60_000;
const maxHeld = 10_000;

/**
 * Receipts held by instance and wamid, in this process (the webhook and the sends of an instance run in the same
 * one). The webhook holds what it cannot match yet; the send takes them once it has recorded its wamid. Both look
 * again after writing their side, so whichever comes second applies them (at most twice; status changes are
 * idempotent).
 */
class EarlyReceipts {
  private readonly held = new Map<string, Held>();

  hold(instanceId: string, wamid: string, status: MessageStatus, detail?: string): void {
    this.sweep();
    const key = `${instanceId}\u0000${wamid}`;
    const entry = this.held.get(key) ?? { statuses: [], until: Date.now() + holdMs };
    entry.statuses.push({ status, ...(detail ? { detail } : {}) });
    this.held.set(key, entry);
  }

  /** The receipts held for this wamid, removed. */
  take(instanceId: string, wamid: string): { status: MessageStatus; detail?: string }[] {
    const key = `${instanceId}\u0000${wamid}`;
    const entry = this.held.get(key);
    this.held.delete(key);
    return entry && entry.until > Date.now() ? entry.statuses : [];
  }

  private sweep(): void {
    if (this.held.size < maxHeld) return;
    const now = Date.now();
    for (const [key, entry] of this.held) if (entry.until <= now) this.held.delete(key);
    // Still full of live entries: the oldest go (a flood of receipts for messages that are not ours).
    for (const key of this.held.keys()) {
      if (this.held.size < maxHeld) break;
      this.held.delete(key);
    }
  }
}

/** The one holder of this process. */
export const earlyReceipts = new EarlyReceipts();
