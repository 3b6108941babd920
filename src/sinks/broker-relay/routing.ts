// Decides which destinations of a broker an outbox event goes to: the instance's own one and/or the global one.
import { eventCatalog, wireName, type EventName } from '../../core/event-catalog.js';
import { sinkWants, type SinkConfig } from '../../events/sink-configs.js';
import type { OutboxRow } from '../../events/outbox-feed.js';
import type { Publication, Scope } from './publisher.js';
import { globalWants } from './settings.js';

/** Where a broker puts an event: exchange or subject, routing key, and the deduplication id to use. */
interface Address {
  target: string;
  routingKey: string;
  messageId: string;
}

export interface RouterOptions {
  /** This broker's bit in an event's stored `brokerWants`. */
  bit: number;
  /** The instance's current setting for this broker (for events written before their wants were stored). */
  liveSink(instanceId: string): SinkConfig | undefined;
  globalEnabled: boolean;
  globalFilter: Record<string, boolean>;
  address(scope: Scope, instanceName: string, wireEvent: string, eventId: string): Address;
}

export class BrokerRouter {
  constructor(private readonly options: RouterOptions) {}

  /** The publications of one outbox row (none when no destination wants it). */
  route(row: OutboxRow): Publication[] {
    if (!Object.hasOwn(eventCatalog, row.event)) return [];
    const event = row.event as EventName;
    const wire = wireName(event);
    const out: Publication[] = [];
    // What the instance's settings wanted when the event was written: a setting removed since (the instance was
    // deleted: its last events) or a restart in between does not lose it.
    const instanceWants =
      row.instanceId !== null &&
      (row.brokerWants !== null ? (row.brokerWants & this.options.bit) !== 0 : sinkWants(this.options.liveSink(row.instanceId), event));
    if (instanceWants) out.push(this.publication('instance', row, wire));
    if (this.options.globalEnabled && globalWants(this.options.globalFilter, event)) out.push(this.publication('global', row, wire));
    return out;
  }

  private publication(scope: Scope, row: OutboxRow, wire: string): Publication {
    const address = this.options.address(scope, row.instanceName, wire, row.id);
    return {
      scope,
      ...address,
      eventId: row.id,
      instance: row.instanceName,
      event: wire,
      body: Buffer.from(row.body, 'utf8'),
    };
  }
}
