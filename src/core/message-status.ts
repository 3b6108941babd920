// Message delivery statuses in their order of progress (Evolution's names and codes).

export const messageStatuses = ['ERROR', 'PENDING', 'SERVER_ACK', 'DELIVERY_ACK', 'READ', 'PLAYED'] as const;
export type MessageStatus = (typeof messageStatuses)[number];

/** What an edit or a deletion for everyone makes a stored message's status (Evolution's names); no receipt moves it on. */
export type ChangedStatus = 'EDITED' | 'DELETED';

function statusRank(status: MessageStatus): number {
  return messageStatuses.indexOf(status);
}

/** The statuses a message passes through to get from `current` to `next` (empty when `next` is not ahead). */
export function statusSteps(current: MessageStatus | ChangedStatus, next: MessageStatus): MessageStatus[] {
  if (current === 'ERROR' || current === 'EDITED' || current === 'DELETED') return [];
  if (next === 'ERROR') return ['ERROR'];
  const from = statusRank(current);
  const to = statusRank(next);
  if (to <= from) return [];
  // Receipts may arrive out of order; a later one implies the earlier ones (never PLAYED implied by READ).
  return messageStatuses.slice(Math.max(from + 1, statusRank('SERVER_ACK')), to + 1).filter((s) => s !== 'PLAYED' || next === 'PLAYED');
}
