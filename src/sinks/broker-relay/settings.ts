// Settings the event brokers read (RabbitMQ, NATS) and the global-subscription rule shared by both.
import type { Config } from '../../platform/config.js';

/** The broker part of the service configuration (settings documented in src/config.ts). */
export type BrokerConfig = Pick<
  Config,
  | 'rabbitmqEnabled'
  | 'rabbitmqUri'
  | 'rabbitmqExchangeName'
  | 'rabbitmqGlobalEnabled'
  | 'rabbitmqGlobalEvents'
  | 'rabbitmqPrefixKey'
  | 'rabbitmqDeclareQueues'
  | 'natsEnabled'
  | 'natsUrl'
  | 'natsGlobalEnabled'
  | 'natsGlobalEvents'
  | 'natsPrefixKey'
  | 'natsStream'
  | 'natsStreamMaxAgeMs'
>;

export { globalFilterAllows as globalWants } from '../../core/event-catalog.js';

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
