// The event sinks of the service, one line each, and what they add to instance creation. A new destination (SQS,
// Kafka…) is one folder implementing the sink contract plus one line here.
import type { SinkCreation } from '../core/event-sink.js';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { Store } from '../platform/store/db.js';
import type { SinkConfigs } from '../events/sink-configs.js';
import type { OutboxSink } from '../events/writer.js';
import type { OutboxCommits } from '../events/outbox-signal.js';
import type { BrokerTuning, RelayNode } from './broker-relay/deps.js';
import { natsSink } from './nats/index.js';
import { rabbitmqSink } from './rabbitmq/index.js';
import { combinedCreation } from './sink-settings.js';
import { WebhookSink, type WebhookDelivery } from './webhook/sink.js';
import { WebsocketSink } from './websocket/sink.js';

export interface EventSinksDeps {
  config: Config;
  store: Pick<Store, 'db' | 'dialect'>;
  /** Every instance's sink settings. */
  sinks: SinkConfigs;
  /** Seals webhook secrets for storage. */
  seal(secret: string): string;
  logger: Logger;
  /** Delivers what the webhook sink writes (the webhook dispatcher). */
  webhookDelivery: WebhookDelivery;
  brokerTuning?: BrokerTuning;
  /** This node: broker relays run on one live node of the fleet at a time. */
  node: RelayNode;
  /** Wake-ups when any node commits events (websocket delivery and broker relays read the outbox). */
  commits?: OutboxCommits;
}

export interface EventSinks {
  /** In the order they see each event (and parse the create request). */
  list: readonly OutboxSink[];
  /** The websocket sink, which the socket.io server attaches to. */
  websocket: WebsocketSink;
  creation: SinkCreation;
}

export function createEventSinks(deps: EventSinksDeps): EventSinks {
  const { config, store, sinks, logger } = deps;
  const brokerDeps = { config, store, sinks, logger, tuning: deps.brokerTuning, node: deps.node, commits: deps.commits };
  const websocket = new WebsocketSink({ settings: sinks, store, logger, commits: deps.commits });
  const list: OutboxSink[] = [
    new WebhookSink({
      config,
      settings: sinks,
      service: { db: store.db, input: { denyPrivate: config.outboundDenyPrivate, seal: deps.seal }, delivery: deps.webhookDelivery },
    }),
    websocket,
    rabbitmqSink(brokerDeps),
    natsSink(brokerDeps),
  ];
  return { list, websocket, creation: combinedCreation(list.flatMap((sink) => (sink.creation ? [sink.creation] : []))) };
}
