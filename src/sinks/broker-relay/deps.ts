// What a broker sink and its relay are built from: configuration, store, sink settings and logger.
import type { LeaseNode } from '../../platform/cluster/job-lease.js';
import type { Logger } from '../../platform/logger.js';
import type { OutboxCommits } from '../../events/outbox-signal.js';
import type { Store } from '../../platform/store/db.js';
import type { SinkConfigs } from '../../events/sink-configs.js';
import type { RelayOptions } from './relay.js';
import type { BrokerConfig } from './settings.js';

/** Timing knobs; the defaults suit production, tests shorten them. */
export interface BrokerTuning {
  relay?: Pick<RelayOptions, 'pollMs' | 'batchSize' | 'backoff' | 'maxRefusals' | 'feed'>;
  /** RabbitMQ confirm / JetStream ack wait (default 15 s / 10 s). */
  confirmTimeoutMs?: number;
  connectTimeoutMs?: number;
}

/** The node a relay runs on: its lease is held by this incarnation. */
export interface RelayNode extends LeaseNode {
  /** Called after each heartbeat: a standby relay then tries the lease (a dead or stopped holder is replaced at once). */
  onLiveNodes?(listener: () => Promise<unknown>): void;
}

export interface BrokerDeps {
  config: BrokerConfig;
  store: Pick<Store, 'db' | 'dialect'>;
  sinks: Pick<SinkConfigs, 'get'>;
  logger: Logger;
  tuning?: BrokerTuning;
  node: RelayNode;
  /** Wake-ups when any node commits events (without them the relay finds events at its next poll). */
  commits?: OutboxCommits;
}
