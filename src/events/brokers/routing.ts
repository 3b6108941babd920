// Decides which destinations of a broker an outbox event goes to: the instance's own one and/or the global one.
import { eventCatalog, subscribed, wireName, type EventName } from '../catalog.js';
import type { SinkConfig } from '../sink-configs.js';
import type { OutboxRow } from './outbox-feed.js';
import type { Publication, Scope } from './publisher.js';
import { globalWants } from './settings.js';

/** Where a broker puts an event: exchange or subject, routing key, and the deduplication id to use. */
export interface Address {
  target: string;
  routingKey: string;
  messageId: string;
}

export interface RouterOptions {
  /** The instance's current setting for this broker. */
  liveSink(instanceId: string): SinkConfig | undefined;
  globalEnabled: boolean;
  globalFilter: Record<string, boolean>;
  address(scope: Scope, instanceName: string, wireEvent: string, eventId: string): Address;
  /** Emit-time settings remembered at most (default 50 000). */
  rememberAtMost?: number;
}

export class BrokerRouter {
  /** Events whose instance setting wanted them when they were written (kept until published). */
  private readonly wantedAtEmit = new Set<string>();
  private readonly capacity: number;

  constructor(private readonly options: RouterOptions) {
    this.capacity = options.rememberAtMost ?? 50_000;
  }

  /**
   * Called after commit for every written event: remembers that the instance setting wanted it, so that
   * a setting removed meanwhile (the instance was deleted: its `remove.instance`) still gets it out.
   */
  noteEmitted(eventId: string, instanceId: string | null, event: EventName): void {
    if (!instanceId || !this.wants(this.options.liveSink(instanceId), event)) return;
    if (this.wantedAtEmit.size >= this.capacity) {
      // Another node holds the relay (or the broker is down for long): forget the oldest tenth.
      let drop = Math.ceil(this.capacity / 10);
      for (const id of this.wantedAtEmit) {
        this.wantedAtEmit.delete(id);
        if (--drop === 0) break;
      }
    }
    this.wantedAtEmit.add(eventId);
  }

  /** The publications of one outbox row (none when no destination wants it). */
  route(row: OutboxRow): Publication[] {
    if (!(row.event in eventCatalog)) return [];
    const event = row.event as EventName;
    const wire = wireName(event);
    const out: Publication[] = [];
    const instanceWants =
      row.instanceId !== null && (this.wantedAtEmit.has(row.id) || this.wants(this.options.liveSink(row.instanceId), event));
    if (instanceWants) out.push(this.publication('instance', row, wire));
    if (this.options.globalEnabled && globalWants(this.options.globalFilter, event)) out.push(this.publication('global', row, wire));
    return out;
  }

  /** The row was published (or given up on): its emit-time note is no longer needed. */
  done(row: OutboxRow): void {
    this.wantedAtEmit.delete(row.id);
  }

  private wants(sink: SinkConfig | undefined, event: EventName): boolean {
    return sink !== undefined && sink.enabled && subscribed(sink.events, event);
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
