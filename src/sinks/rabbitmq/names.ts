// Instance names RabbitMQ cannot carry: its reserved exchange prefix, and the global exchange's own name.

/**
 * Why RabbitMQ cannot publish the events of an instance named `instanceName` (the exchange is the name), or undefined
 * when it can. `globalExchange`: where the global events go (RABBITMQ_EXCHANGE_NAME): an instance of that name would
 * mix its events with everyone's.
 */
export function rabbitmqNameProblem(instanceName: string, globalExchange: string | undefined): string | undefined {
  if (globalExchange && instanceName === globalExchange) {
    return `instance ${instanceName} has the name of the global RabbitMQ exchange (RABBITMQ_EXCHANGE_NAME), so its events would mix with every instance's; use another instance name`;
  }
  if (instanceName.startsWith('amq.')) {
    return `RabbitMQ reserves exchange names starting with "amq." for itself, so instance ${instanceName} cannot publish to its exchange; use another instance name`;
  }
  return undefined;
}
