// Writes events into the outbox, with one pending delivery per matching webhook, inside the caller's unit.
import { timeOrderedId } from '../platform/util/time-ordered-id.js';
import type { Config } from '../platform/config.js';
import type { Tx } from '../platform/store/db.js';
import type { RowSink } from '../platform/store/unit.js';
import type { EventEnvelope, EventSource } from '../core/event-envelope.js';
import { globalFilterAllows, wireName, type EventName } from '../core/event-catalog.js';
import { globalWebhookUrl, instanceWebhookUrl } from '../sinks/webhook/urls.js';
import { brokerWantsOf } from './broker-wants.js';
import { sinkWants, webhookOptions, type SinkConfigs } from './sink-configs.js';

export type DeliveryTarget = 'instance' | 'global';

/** Deliveries to one kind of destination of one instance, delivered in order. */
export interface DeliveryLane {
  target: DeliveryTarget;
  instanceId: string | null;
}

/** Listeners told (after commit) that an event was written; sinks other than webhooks hook in here. */
export type EventListener = (envelope: EventEnvelope, instanceId: string | null, event: EventName) => void;

export class EventWriter {
  private readonly listeners: EventListener[] = [];
  private wakeDeliveries: (lanes: DeliveryLane[]) => void = () => {};

  constructor(
    private readonly config: Config,
    private readonly sinks: SinkConfigs,
  ) {}

  /** Told (after commit) which delivery lanes got new deliveries. */
  onDeliveriesQueued(wake: (lanes: DeliveryLane[]) => void): void {
    this.wakeDeliveries = wake;
  }

  onEvent(listener: EventListener): void {
    this.listeners.push(listener);
  }

  /**
   * Writes the event and its deliveries into the unit. `farewell`: the instance is being deleted in this unit, so its
   * webhook deliveries keep the webhook's current settings with them (nothing else will hold them).
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
      broker_wants: brokerWantsOf(this.sinks, source.id, event),
    });
    const lanes: DeliveryLane[] = [];
    const snapshot = options.farewell ? this.webhookSnapshot(source.id) : null;
    for (const [target, url] of this.destinations(source.id, event)) {
      unit.insert('deliveries', {
        event_id: envelope.id,
        outbox_seq: 0,
        instance_id: source.id,
        instance_name: source.name,
        target,
        url,
        event,
        state: 'pending',
        attempts: 0,
        next_attempt_at: now,
        created_at: now,
        settings_snapshot: target === 'instance' ? snapshot : null,
      });
      lanes.push({ target, instanceId: source.id });
    }
    unit.afterCommit(() => {
      if (lanes.length > 0) this.wakeDeliveries(lanes);
      for (const listener of this.listeners) listener(envelope, source.id, event);
    });
    return envelope;
  }

  /**
   * The instance is being deleted in this unit: its webhook deliveries not yet made keep the webhook's current
   * settings with them and still go out (the events of its last moments, such as its logout, included).
   */
  async keepPendingDeliveries(tx: Tx, instanceId: string): Promise<void> {
    const snapshot = this.webhookSnapshot(instanceId);
    if (snapshot === null) return;
    await tx
      .updateTable('deliveries')
      .set({ settings_snapshot: snapshot })
      .where('instance_id', '=', instanceId)
      .where('target', '=', 'instance')
      .where('state', '=', 'pending')
      .where('settings_snapshot', 'is', null)
      .execute();
  }

  private webhookSnapshot(instanceId: string): string | null {
    const hook = this.sinks.get(instanceId, 'webhook');
    return hook ? JSON.stringify({ enabled: hook.enabled, options: webhookOptions(hook) }) : null;
  }

  private destinations(instanceId: string, event: EventName): [DeliveryTarget, string][] {
    const out: [DeliveryTarget, string][] = [];
    const hook = this.sinks.get(instanceId, 'webhook');
    if (hook && sinkWants(hook, event)) {
      const url = instanceWebhookUrl(webhookOptions(hook), event);
      if (url) out.push(['instance', url]);
    }
    if (this.config.webhookGlobalEnabled && globalFilterAllows(this.config.webhookGlobalEvents, event)) {
      const url = globalWebhookUrl(this.config, event);
      if (url) out.push(['global', url]);
    }
    return out;
  }
}
