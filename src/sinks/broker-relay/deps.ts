// What a broker sink and its relay are built from: configuration, store, sink settings and logger.
import type { Logger } from '../../platform/logger.js';
import type { Store } from '../../platform/store/db.js';
import type { SinkConfigs } from '../../events/sink-configs.js';
import type { RelayOptions } from './relay.js';
import type { BrokerConfig } from './settings.js';

/** Timing knobs; the defaults suit production, tests shorten them. */
export interface BrokerTuning {
  relay?: Pick<RelayOptions, 'pollMs' | 'batchSize' | 'leaseMs' | 'backoff' | 'maxRefusals' | 'feed'>;
  /** RabbitMQ confirm / JetStream ack wait (default 15 s / 10 s). */
  confirmTimeoutMs?: number;
  connectTimeoutMs?: number;
}

export interface BrokerDeps {
  config: BrokerConfig;
  store: Pick<Store, 'db' | 'dialect'>;
  sinks: Pick<SinkConfigs, 'get'>;
  logger: Logger;
  tuning?: BrokerTuning;
}
