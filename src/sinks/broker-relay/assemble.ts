// A broker's router and relay as its sink builds them: the parts every broker fills in the same way.
import type { BrokerDeps } from './deps.js';
import type { BrokerPublisher } from './publisher.js';
import { OutboxRelay } from './relay.js';
import { BrokerRouter, type RouterOptions } from './routing.js';

/** The router of broker `kind`: an instance's live setting is its `kind` sink. */
export function brokerRouter(kind: string, sinks: BrokerDeps['sinks'], options: Omit<RouterOptions, 'liveSink'>): BrokerRouter {
  return new BrokerRouter({ ...options, liveSink: (instanceId) => sinks.get(instanceId, kind) });
}

/** The relay of broker `name` (its cursor and log name): the store's outbox to `publisher`, leased by this node's incarnation. */
export function brokerRelay(name: string, deps: BrokerDeps, publisher: BrokerPublisher, router: BrokerRouter): OutboxRelay {
  const { store, tuning, node } = deps;
  const relay = new OutboxRelay({ name, db: store.db, dialect: store.dialect, publisher, router, logger: deps.logger, node, ...tuning?.relay });
  // After each heartbeat a standby tries the lease: a holder known dead or stopped is replaced within a beat.
  node.onLiveNodes?.(async () => {
    if (!relay.active) relay.wake();
  });
  return relay;
}
