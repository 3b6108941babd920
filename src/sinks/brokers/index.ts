// The broker sinks as the service uses them: one outbox relay per enabled broker, woken after each commit.
import type { BrokerDeps } from '../broker-relay/deps.js';
import { createNatsRelay, natsRouter } from '../nats/relay.js';
import { createRabbitmqRelay, rabbitmqRouter } from '../rabbitmq/relay.js';
import type { OutboxRelay } from '../broker-relay/relay.js';
import type { BrokerRouter } from '../broker-relay/routing.js';

export type { BrokerConfig } from '../broker-relay/settings.js';
export type { BrokerDeps, BrokerTuning } from '../broker-relay/deps.js';
export { globalWants } from '../broker-relay/settings.js';
export { OutboxRelay } from '../broker-relay/relay.js';

export interface BrokerRelays {
  rabbitmq?: OutboxRelay;
  nats?: OutboxRelay;
  /** Creates the cursors when missing and starts relaying (brokers may be down: relays wait for them). */
  start(): Promise<void>;
  /** Stops relaying; events not yet confirmed stay in the outbox for the next start. */
  stop(): Promise<void>;
}

/** Builds the relays of the enabled brokers and hooks them to the event writer. */
export function createBrokerRelays(deps: BrokerDeps): BrokerRelays {
  const pairs: { relay: OutboxRelay; router: BrokerRouter }[] = [];
  let rabbitmq: OutboxRelay | undefined;
  let nats: OutboxRelay | undefined;
  if (deps.config.rabbitmqEnabled) {
    const router = rabbitmqRouter(deps);
    rabbitmq = createRabbitmqRelay(deps, router);
    pairs.push({ relay: rabbitmq, router });
  }
  if (deps.config.natsEnabled) {
    const router = natsRouter(deps);
    nats = createNatsRelay(deps, router);
    pairs.push({ relay: nats, router });
  }
  if (pairs.length > 0) {
    deps.events.onEvent(() => {
      for (const { relay } of pairs) relay.wake();
    });
  }
  return {
    rabbitmq,
    nats,
    async start() {
      for (const { relay } of pairs) await relay.start();
    },
    async stop() {
      await Promise.all(pairs.map(({ relay }) => relay.stop()));
    },
  };
}
