// The NATS relay: subject `<instance>.<wire event>` (global: `[<prefix>.]<wire event>`), stored by JetStream.
import { brokerRelay, brokerRouter } from '../broker-relay/assemble.js';
import type { BrokerDeps } from '../broker-relay/deps.js';
import { NatsPublisher } from './publisher.js';
import type { Publication } from '../broker-relay/publisher.js';
import type { OutboxRelay } from '../broker-relay/relay.js';
import type { BrokerRouter } from '../broker-relay/routing.js';
import { natsMark } from './mark.js';

export function natsRouter(deps: Pick<BrokerDeps, 'config' | 'sinks'>): BrokerRouter {
  const { config, sinks } = deps;
  return brokerRouter('nats', sinks, {
    bit: natsMark,
    globalEnabled: config.natsGlobalEnabled,
    globalFilter: config.natsGlobalEvents,
    address: (scope, instance, wire, eventId) =>
      scope === 'instance'
        ? { target: `${instance}.${wire}`, routingKey: '', messageId: eventId }
        : {
            target: config.natsPrefixKey ? `${config.natsPrefixKey}.${wire}` : wire,
            routingKey: '',
            // Both copies land in one stream, whose deduplication is by id alone: the global copy needs its own.
            messageId: `${eventId}:global`,
          },
  });
}

/** The stream subject that covers a publication: the instance's or prefix's whole space, else the subject itself. */
function natsPattern(prefix: string) {
  return (publication: Publication): string => {
    if (publication.scope === 'instance') return `${publication.instance}.>`;
    return prefix ? `${prefix}.>` : publication.target;
  };
}

export function createNatsRelay(deps: BrokerDeps, router: BrokerRouter): OutboxRelay {
  const { config, tuning } = deps;
  if (!config.natsUrl) throw new Error('NATS_URL (or NATS_URI) is required when NATS_ENABLED=true');
  const logger = deps.logger.child({ component: 'nats' });
  const publisher = new NatsPublisher({
    url: config.natsUrl,
    stream: config.natsStream,
    streamMaxAgeMs: config.natsStreamMaxAgeMs,
    patternOf: natsPattern(config.natsPrefixKey),
    logger,
    ackTimeoutMs: tuning?.confirmTimeoutMs,
    connectTimeoutMs: tuning?.connectTimeoutMs,
  });
  return brokerRelay('nats', deps, publisher, router);
}
