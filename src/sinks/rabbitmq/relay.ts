// The RabbitMQ relay: instance events to the topic exchange named after the instance, global ones to RABBITMQ_EXCHANGE_NAME.
import { brokerRelay, brokerRouter } from '../broker-relay/assemble.js';
import type { BrokerDeps } from '../broker-relay/deps.js';
import type { OutboxRelay } from '../broker-relay/relay.js';
import { RabbitmqPublisher } from './publisher.js';
import type { BrokerRouter } from '../broker-relay/routing.js';
import { rabbitmqMark } from './mark.js';

export function rabbitmqRouter(deps: Pick<BrokerDeps, 'config' | 'sinks'>): BrokerRouter {
  const { config, sinks } = deps;
  return brokerRouter('rabbitmq', sinks, {
    bit: rabbitmqMark,
    globalEnabled: config.rabbitmqGlobalEnabled,
    globalFilter: config.rabbitmqGlobalEvents,
    // The routing key is the wire event name on both exchanges; the message id is the envelope id.
    address: (scope, instance, wire, eventId) => ({
      target: scope === 'instance' ? instance : config.rabbitmqExchangeName,
      routingKey: wire,
      messageId: eventId,
    }),
  });
}

export function createRabbitmqRelay(deps: BrokerDeps, router: BrokerRouter): OutboxRelay {
  const { config, tuning } = deps;
  if (!config.rabbitmqUri) throw new Error('RABBITMQ_URI is required when RABBITMQ_ENABLED=true');
  const logger = deps.logger.child({ component: 'rabbitmq' });
  const publisher = new RabbitmqPublisher({
    uri: config.rabbitmqUri,
    logger,
    declareQueues: config.rabbitmqDeclareQueues,
    globalQueuePrefix: config.rabbitmqPrefixKey,
    confirmTimeoutMs: tuning?.confirmTimeoutMs,
    connectTimeoutMs: tuning?.connectTimeoutMs,
  });
  return brokerRelay('rabbitmq', deps, publisher, router);
}
