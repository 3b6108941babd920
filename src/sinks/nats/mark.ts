// NATS's mark on outbox events (bit 2 of `broker_wants`, as migration 0008 and every stored row have it).
export const natsMark = 2;
