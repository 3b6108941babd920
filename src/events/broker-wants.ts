// Which brokers an instance's settings want an event on, decided when the event is written and stored with it.
import type { EventName } from '../core/event-catalog.js';
import { sinkWants, type SinkConfigs } from './sink-configs.js';

/** One bit per broker in the outbox's `broker_wants`. */
export const brokerBit = { rabbitmq: 1, nats: 2 } as const;

/**
 * The bits of the brokers whose settings for the instance want `event` now. Stored with the event, so a relay
 * publishes what was wanted when it was written even after the settings went (the instance was deleted, the service
 * restarted, another node relays).
 */
export function brokerWantsOf(sinks: SinkConfigs, instanceId: string, event: EventName): number {
  let wants = 0;
  for (const kind of ['rabbitmq', 'nats'] as const) {
    if (sinkWants(sinks.get(instanceId, kind), event)) wants |= brokerBit[kind];
  }
  return wants;
}
