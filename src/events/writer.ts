// Writes events into the outbox inside the caller's unit and offers each to every event sink (it knows none by name).
import { timeOrderedId } from '../platform/util/time-ordered-id.js';
import type { Config } from '../platform/config.js';
import type { Tx } from '../platform/store/db.js';
import type { RowSink } from '../platform/store/unit.js';
import type { EventEnvelope, EventSource } from '../core/event-envelope.js';
import type { EventSink, WrittenEvent } from '../core/event-sink.js';
import { wireName, type EventName } from '../core/event-catalog.js';
import type { SinkConfigs } from './sink-configs.js';

/** An event sink as the outbox writer drives it: on this store's units and transactions. */
export type OutboxSink = EventSink<RowSink, Tx>;

export class EventWriter {
  constructor(
    private readonly config: Config,
    private readonly settings: Pick<SinkConfigs, 'get'>,
    private readonly sinks: readonly OutboxSink[],
    /** Told after each unit with events commits (every node's outbox readers are signalled). */
    private readonly committed: () => void = () => undefined,
  ) {
    const marked = sinks.filter((sink) => sink.outboxMark !== undefined);
    for (const sink of marked) {
      const mark = sink.outboxMark ?? 0;
      // One bit each: a relay tests its own bit, so a shared or multi-bit mark would publish events nobody wanted.
      if (mark <= 0 || (mark & (mark - 1)) !== 0 || marked.some((other) => other !== sink && other.outboxMark === mark)) {
        throw new Error(`event sink ${sink.kind}: its outbox mark ${mark} must be a bit of its own`);
      }
    }
  }

  /**
   * Writes the event and what each sink keeps with it into the unit. `farewell`: the instance is being deleted in
   * this unit, so what a sink keeps carries the instance's current settings with it (nothing else will hold them).
   */
  emit(unit: RowSink, source: EventSource, event: EventName, data: unknown, options: { farewell?: boolean } = {}): EventEnvelope {
    const now = Date.now();
    const envelope: EventEnvelope = {
      id: timeOrderedId(),
      event: wireName(event),
      instance: source.name,
      data,
      date_time: new Date(now).toISOString(),
      sender: source.ownerJid,
      server_url: this.config.serverUrl,
      apikey: this.config.exposeApiKeyInEvents ? (source.apikey ?? null) : null,
    };
    const body = JSON.stringify(envelope);
    // The outbox row is an insertion-ordered log: deliveries reference it by event id.
    unit.insert('outbox', {
      id: envelope.id,
      instance_id: source.id,
      instance_name: source.name,
      event,
      body,
      created_at: now,
      broker_wants: this.marksOf(source.id, event),
    });
    const written: WrittenEvent = { envelope, source, event, writtenAt: now, farewell: options.farewell === true };
    const afterCommit: (() => void)[] = [];
    for (const sink of this.sinks) {
      const then = sink.write?.(unit, written);
      if (then) afterCommit.push(then);
    }
    unit.afterCommit(() => {
      for (const then of afterCommit) then();
      this.committed();
    });
    return envelope;
  }

  /**
   * The instance is being deleted in this unit: each sink keeps what it has not yet passed on (webhook deliveries
   * not yet made keep the webhook's current settings and still go out, its last moments' events included).
   */
  async keepPendingDeliveries(tx: Tx, instanceId: string): Promise<void> {
    for (const sink of this.sinks) await sink.instanceRemoved?.(tx, instanceId);
  }

  /**
   * The marks of the sinks whose settings for the instance want `event` now. Stored with the event, so a relay
   * publishes what was wanted when it was written even after the settings went (the instance was deleted, the service
   * restarted, another node relays).
   */
  private marksOf(instanceId: string, event: EventName): number {
    let marks = 0;
    for (const sink of this.sinks) {
      if (sink.outboxMark !== undefined && sink.wants(this.settings.get(instanceId, sink.kind), event)) marks |= sink.outboxMark;
    }
    return marks;
  }
}
