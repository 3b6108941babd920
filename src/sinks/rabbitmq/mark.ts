// RabbitMQ's mark on outbox events (bit 1 of `broker_wants`, as migration 0008 and every stored row have it).
export const rabbitmqMark = 1;
