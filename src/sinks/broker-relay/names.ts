// Instance names a broker cannot carry: RabbitMQ's reserved exchange prefix, NATS subjects with an empty token, and the
// global destinations' own names.

/**
 * Why `kind` cannot publish the events of an instance named `instanceName` (the exchange, or the subject prefix, is
 * the name), or undefined when it can. Instance names are letters, digits, `-`, `_` and `.`, so only these remain.
 */
export function brokerNameProblem(
  kind: 'rabbitmq' | 'nats',
  instanceName: string,
  /** Where the global events go: an instance of that name would mix its events with everyone's. */
  global: { rabbitmqExchange?: string; natsPrefix?: string } = {},
): string | undefined {
  if (kind === 'rabbitmq' && global.rabbitmqExchange && instanceName === global.rabbitmqExchange) {
    return `instance ${instanceName} has the name of the global RabbitMQ exchange (RABBITMQ_EXCHANGE_NAME), so its events would mix with every instance's; use another instance name`;
  }
  if (kind === 'nats' && global.natsPrefix && instanceName === global.natsPrefix) {
    return `instance ${instanceName} has the name of the global NATS subject prefix (NATS_PREFIX_KEY), so its events would mix with every instance's; use another instance name`;
  }
  if (kind === 'rabbitmq' && instanceName.startsWith('amq.')) {
    return `RabbitMQ reserves exchange names starting with "amq." for itself, so instance ${instanceName} cannot publish to its exchange; use another instance name`;
  }
  if (kind === 'nats' && (instanceName.endsWith('.') || instanceName.includes('..'))) {
    return `NATS subjects cannot have an empty token, so instance ${instanceName} (a name ending in "." or holding "..") cannot publish to <instance>.<event>; use another instance name`;
  }
  return undefined;
}
