// The websocket's mark on outbox events (bit 3 of `broker_wants`): the instance's websocket settings wanted the event.
export const websocketMark = 4;
