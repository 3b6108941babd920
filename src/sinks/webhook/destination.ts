// What a delivery goes out with right now: the instance's current headers, secret and base64 flag, or why it is cancelled.
import type { Config } from '../../platform/config.js';
import type { Db } from '../../platform/store/db.js';
import type { SecretsBox } from '../../platform/util/secrets-box.js';
import type { SinkConfigs } from '../../events/sink-configs.js';
import { webhookOptions, type WebhookOptions } from './options.js';
import { storedWebhook, type DeliveryRow } from './queries.js';
import { globalWebhookUrl, instanceWebhookUrl, redactUrl, withEventSuffix } from './urls.js';
import type { EventName } from '../../core/event-catalog.js';

export type Destination =
  | {
      kind: 'send';
      /** Where it goes now: the webhook's current URL (a URL fixed after the event takes its deliveries with it). */
      url: string;
      /**
       * The envelope's `destination`, as Evolution writes it: the instance webhook's URL (never the by-events one) when
       * the instance has one, else the global URL with the event's suffix; the same on both deliveries of an event.
       */
      destination: string;
      /** Custom headers as configured (global target: none). */
      headers: Record<string, unknown>;
      /** `whsec_…` secret to sign with, if any applies. */
      secret: string | undefined;
      base64: boolean;
    }
  | { kind: 'cancel'; reason: string };

export interface DestinationDeps {
  db: Db;
  config: Config;
  sinks: SinkConfigs;
  box: SecretsBox;
}

/**
 * Global deliveries always go, to the global webhook as configured now, signed with WEBHOOK_SIGNING_SECRET. Instance
 * deliveries follow the instance's webhook as it is now (URL, headers and secret may have changed since the event):
 * cancelled when it was disabled or removed; signed with its own secret, else with WEBHOOK_SIGNING_SECRET. Throws
 * when a sealed secret cannot be opened (wrong SECRETS_KEY), which the caller counts as a failed attempt.
 */
export async function resolveDestination(row: DeliveryRow, deps: DestinationDeps): Promise<Destination> {
  const globalSecret = deps.config.webhookSigningSecret;
  const event = row.event as EventName;
  if (row.target === 'global') {
    const url = globalWebhookUrl(deps.config, event) ?? row.url;
    const own = row.instance_id === null ? undefined : deps.sinks.get(row.instance_id, 'webhook');
    const ownUrl = own ? webhookOptions(own).url : '';
    const destination = redactUrl(ownUrl || (deps.config.webhookGlobalUrl ? withEventSuffix(deps.config.webhookGlobalUrl, event) : url));
    return { kind: 'send', url, destination, headers: {}, secret: globalSecret, base64: false };
  }
  if (row.instance_id === null) return { kind: 'cancel', reason: 'instance webhook removed (delivery has no instance)' };
  const cached = deps.sinks.get(row.instance_id, 'webhook');
  let hook = row.settings_snapshot
    ? (JSON.parse(row.settings_snapshot) as { enabled: boolean; options: WebhookOptions })
    : cached
      ? { enabled: cached.enabled, options: webhookOptions(cached) }
      : await storedWebhook(deps.db, row.instance_id);
  // Its instance may have been deleted since the row was read: the deletion gave the row the webhook's settings.
  if (!hook && !row.settings_snapshot) hook = await snapshotOf(deps.db, row.id);
  if (!hook) return { kind: 'cancel', reason: 'instance webhook removed before delivery' };
  if (!hook.enabled) return { kind: 'cancel', reason: 'instance webhook disabled before delivery' };
  const url = instanceWebhookUrl(hook.options, event);
  if (!url) return { kind: 'cancel', reason: 'instance webhook has no http(s) URL' };
  const { secretSealed } = hook.options;
  return {
    kind: 'send',
    url,
    destination: redactUrl(hook.options.url),
    headers: hook.options.headers,
    secret: secretSealed ? deps.box.open(secretSealed) : globalSecret,
    base64: hook.options.base64,
  };
}

/** The webhook settings a delivery carries since its instance was deleted (`EventWriter.keepPendingDeliveries`). */
async function snapshotOf(db: Db, deliveryId: number): Promise<{ enabled: boolean; options: WebhookOptions } | undefined> {
  const row = await db.selectFrom('deliveries').select('settings_snapshot').where('id', '=', deliveryId).executeTakeFirst();
  return row?.settings_snapshot ? (JSON.parse(row.settings_snapshot) as { enabled: boolean; options: WebhookOptions }) : undefined;
}
