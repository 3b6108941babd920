// The RabbitMQ sink: events to the topic exchange named after the instance (routing key = event), relayed when enabled.
import type { BrokerDeps } from '../broker-relay/deps.js';
import { BrokerSink } from '../broker-relay/sink.js';
import { rabbitmqMark } from './mark.js';
import { rabbitmqNameProblem } from './names.js';
import { createRabbitmqRelay, rabbitmqRouter } from './relay.js';

export function rabbitmqSink(deps: BrokerDeps): BrokerSink {
  const { config } = deps;
  return new BrokerSink({
    kind: 'rabbitmq',
    outboxMark: rabbitmqMark,
    label: 'RabbitMQ',
    where: 'the topic exchange named after the instance (routing key = event)',
    settings: deps.sinks,
    nameProblem: (instanceName) => rabbitmqNameProblem(instanceName, config.rabbitmqExchangeName),
    commits: deps.commits,
    relay: config.rabbitmqEnabled ? createRabbitmqRelay(deps, rabbitmqRouter(deps)) : undefined,
  });
}
