// What a delivery goes out with right now: the instance's current headers, secret and base64 flag, or why it is cancelled.
import type { Config } from '../../config.js';
import type { Db } from '../../store/db.js';
import type { SecretsBox } from '../../util/secrets-box.js';
import { webhookOptions, type SinkConfigs, type WebhookOptions } from '../sink-configs.js';
import { storedWebhook, type DeliveryRow } from './queries.js';

export type Destination =
  | {
      kind: 'send';
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
 * Global deliveries always go, signed with WEBHOOK_SIGNING_SECRET. Instance deliveries follow the instance's
 * webhook as it is now (headers and secret may have changed since the event): cancelled when it was disabled
 * or removed; signed with its own secret, else with WEBHOOK_SIGNING_SECRET. Throws when a sealed secret
 * cannot be opened (wrong SECRETS_KEY), which the caller counts as a failed attempt.
 */
export async function resolveDestination(row: DeliveryRow, deps: DestinationDeps): Promise<Destination> {
  const globalSecret = deps.config.webhookSigningSecret;
  if (row.target === 'global') return { kind: 'send', headers: {}, secret: globalSecret, base64: false };
  if (row.instance_id === null) return { kind: 'cancel', reason: 'instance webhook removed (delivery has no instance)' };
  const cached = deps.sinks.get(row.instance_id, 'webhook');
  const hook = row.settings_snapshot
    ? (JSON.parse(row.settings_snapshot) as { enabled: boolean; options: WebhookOptions })
    : cached
      ? { enabled: cached.enabled, options: webhookOptions(cached) }
      : await storedWebhook(deps.db, row.instance_id);
  if (!hook) return { kind: 'cancel', reason: 'instance webhook removed before delivery' };
  if (!hook.enabled) return { kind: 'cancel', reason: 'instance webhook disabled before delivery' };
  const { secretSealed } = hook.options;
  return {
    kind: 'send',
    headers: hook.options.headers,
    secret: secretSealed ? deps.box.open(secretSealed) : globalSecret,
    base64: hook.options.base64,
  };
}
