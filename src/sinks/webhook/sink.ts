// The webhook sink: one pending delivery per matching webhook (the instance's, the global one) written with each
// event, the delivery lanes woken after commit, and the webhook routes.
import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../../platform/config.js';
import type { Tx } from '../../platform/store/db.js';
import type { RowSink } from '../../platform/store/unit.js';
import { globalFilterAllows, type EventName } from '../../core/event-catalog.js';
import type { SinkCreation, SinkRoutesOptions, WrittenEvent } from '../../core/event-sink.js';
import { sinkWants, type SinkConfigs } from '../../events/sink-configs.js';
import type { OutboxSink } from '../../events/writer.js';
import { webhookCreation } from './creation.js';
import type { DeliveryLane, DeliveryTarget } from './lanes.js';
import { webhookOptions } from './options.js';
import { webhookRoutes, type WebhookRoutesDeps } from './routes.js';
import { globalWebhookUrl, instanceWebhookUrl } from './urls.js';

type WebhookSinkConfig = Pick<Config, 'webhookGlobalEnabled' | 'webhookGlobalEvents' | 'webhookGlobalUrl' | 'webhookGlobalByEvents'>;

/** The running part: the dispatcher delivering what the sink writes. */
export interface WebhookDelivery {
  wakeLanes(lanes: DeliveryLane[]): void;
  wake(): void;
  start(): void;
  stop(): Promise<void>;
}

export interface WebhookSinkDeps {
  config: WebhookSinkConfig;
  settings: Pick<SinkConfigs, 'get'>;
  /** The service's delivery, routes and creation part; without it the sink only writes (tests wake their own dispatcher). */
  service?: Omit<WebhookRoutesDeps, 'settings' | 'wake'> & { delivery: WebhookDelivery };
}

export class WebhookSink implements OutboxSink {
  readonly kind = 'webhook';
  readonly routes?: FastifyPluginAsync<SinkRoutesOptions>;
  readonly creation?: SinkCreation;
  private wakeDeliveries: (lanes: DeliveryLane[]) => void = () => {};

  constructor(private readonly deps: WebhookSinkDeps) {
    const service = deps.service;
    if (service) {
      const { delivery } = service;
      this.onDeliveriesQueued((lanes) => delivery.wakeLanes(lanes));
      this.routes = webhookRoutes({ ...service, settings: deps.settings, wake: () => delivery.wake() });
      this.creation = webhookCreation(service.input);
    }
  }

  /** Told (after commit) which delivery lanes got new deliveries. */
  onDeliveriesQueued(wake: (lanes: DeliveryLane[]) => void): void {
    this.wakeDeliveries = wake;
  }

  wants(settings: Parameters<typeof sinkWants>[0], event: EventName): boolean {
    return sinkWants(settings, event);
  }

  write(unit: RowSink, { envelope, source, event, writtenAt, farewell }: WrittenEvent): (() => void) | undefined {
    const lanes: DeliveryLane[] = [];
    const snapshot = farewell ? this.snapshot(source.id) : null;
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
        next_attempt_at: writtenAt,
        created_at: writtenAt,
        settings_snapshot: target === 'instance' ? snapshot : null,
      });
      lanes.push({ target, instanceId: source.id });
    }
    return lanes.length > 0 ? () => this.wakeDeliveries(lanes) : undefined;
  }

  /**
   * The instance is being deleted in this unit: its webhook deliveries not yet made keep the webhook's current
   * settings with them and still go out (the events of its last moments, such as its logout, included).
   */
  async instanceRemoved(tx: Tx, instanceId: string): Promise<void> {
    const snapshot = this.snapshot(instanceId);
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

  start(): Promise<void> {
    this.deps.service?.delivery.start();
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    await this.deps.service?.delivery.stop();
  }

  private snapshot(instanceId: string): string | null {
    const hook = this.deps.settings.get(instanceId, 'webhook');
    return hook ? JSON.stringify({ enabled: hook.enabled, options: webhookOptions(hook) }) : null;
  }

  private destinations(instanceId: string, event: EventName): [DeliveryTarget, string][] {
    const out: [DeliveryTarget, string][] = [];
    const hook = this.deps.settings.get(instanceId, 'webhook');
    if (hook && sinkWants(hook, event)) {
      const url = instanceWebhookUrl(webhookOptions(hook), event);
      if (url) out.push(['instance', url]);
    }
    const { config } = this.deps;
    if (config.webhookGlobalEnabled && globalFilterAllows(config.webhookGlobalEvents, event)) {
      const url = globalWebhookUrl(config, event);
      if (url) out.push(['global', url]);
    }
    return out;
  }
}
