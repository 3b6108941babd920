// What the broker relays are built from: configuration, store, sink settings, event writer and logger.
import type { Logger } from '../../platform/logger.js';
import type { Store } from '../../platform/store/db.js';
import type { EventWriter } from '../../events/writer.js';
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
  events: Pick<EventWriter, 'onEvent'>;
  logger: Logger;
  tuning?: BrokerTuning;
}
