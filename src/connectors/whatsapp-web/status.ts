// Baileys' message status numbers (WebMessageInfo.Status 0–5) as the core's status names.
import { messageStatuses, type MessageStatus } from '../../core/message-status.js';

/** 0 ERROR, 1 PENDING, 2 SERVER_ACK, 3 DELIVERY_ACK, 4 READ, 5 PLAYED; anything else is unknown. */
export function statusFromBaileys(value: unknown): MessageStatus | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value)) return undefined;
  return messageStatuses[value];
}

/** A per-user receipt (group messages): the furthest step it records. */
export function statusFromReceipt(receipt: { playedTimestamp?: unknown; readTimestamp?: unknown; receiptTimestamp?: unknown }): MessageStatus | undefined {
  if (receipt.playedTimestamp) return 'PLAYED';
  if (receipt.readTimestamp) return 'READ';
  if (receipt.receiptTimestamp) return 'DELIVERY_ACK';
  return undefined;
}
