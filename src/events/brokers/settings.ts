// Settings the event brokers read (RabbitMQ, NATS) and the global-subscription rule shared by both.
import type { EventName } from '../catalog.js';

/** The broker part of the service configuration (the `Config` type carries these fields). */
export interface BrokerConfig {
  /** RABBITMQ_ENABLED: run the RabbitMQ relay at all. */
  rabbitmqEnabled: boolean;
  /** RABBITMQ_URI: `amqp://user:pass@host:5672/vhost`. */
  rabbitmqUri: string | undefined;
  /** RABBITMQ_EXCHANGE_NAME: topic exchange of the global events. */
  rabbitmqExchangeName: string;
  /** RABBITMQ_GLOBAL_ENABLED: every instance's events also go to the global exchange. */
  rabbitmqGlobalEnabled: boolean;
  /** RABBITMQ_EVENTS_<NAME>: filter of the global exchange (same rule as WEBHOOK_EVENTS_<NAME>). */
  rabbitmqGlobalEvents: Record<string, boolean>;
  /** RABBITMQ_PREFIX_KEY: prefix of the global queue names (`<prefix>.<wire event>`). */
  rabbitmqPrefixKey: string;
  /** RABBITMQ_DECLARE_QUEUES: declare and bind Evolution's durable queues (`<instance>.<wire event>`, `<wire event>`). */
  rabbitmqDeclareQueues: boolean;
  /** NATS_ENABLED: run the NATS relay at all. */
  natsEnabled: boolean;
  /** NATS_URL (or Evolution's NATS_URI): `nats://host:4222`, comma list for a cluster. */
  natsUrl: string | undefined;
  /** NATS_GLOBAL_ENABLED: every instance's events also go to the global subject. */
  natsGlobalEnabled: boolean;
  /** NATS_EVENTS_<NAME>: filter of the global subject. */
  natsGlobalEvents: Record<string, boolean>;
  /** NATS_PREFIX_KEY: prefix of the global subjects (`<prefix>.<wire event>`; bare `<wire event>` when empty). */
  natsPrefixKey: string;
  /** NATS_STREAM: JetStream stream that stores the published events (created when missing). */
  natsStream: string;
  /** NATS_STREAM_MAX_AGE_SECONDS as ms: age limit given to the stream when it is created (0 = none). */
  natsStreamMaxAgeMs: number;
  /** NODE_ID: owner name of the relay lease. */
  nodeId: string;
}

/**
 * Global filter rule (as for WEBHOOK_EVENTS_<NAME>): every event passes unless switched off; once any name
 * is switched on, only the names switched on pass. `GROUPS_UPDATE` is accepted for `GROUP_UPDATE`.
 */
export function globalWants(filter: Record<string, boolean>, event: EventName): boolean {
  const explicit = filter[event] ?? (event === 'GROUP_UPDATE' ? filter.GROUPS_UPDATE : undefined);
  const anyOn = Object.values(filter).some((v) => v);
  return anyOn ? explicit === true : explicit !== false;
}

/** A connection address fit for logs: scheme, host and port, never credentials or vhost secrets. */
export function safeAddress(uri: string | undefined): string {
  if (!uri) return '(unset)';
  return uri
    .split(',')
    .map((one) => {
      try {
        const url = new URL(one.includes('://') ? one.trim() : `nats://${one.trim()}`);
        return `${url.protocol}//${url.host}`;
      } catch {
        return 'invalid-address';
      }
    })
    .join(',');
}
