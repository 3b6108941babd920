// Where a webhook delivery of an event goes: the webhook's URL, with the event's suffix when it is set "by events".
import type { Config } from '../../config.js';
import { eventSuffix, type EventName } from '../catalog.js';
import type { WebhookOptions } from '../sink-configs.js';

/** The instance webhook's URL for `event`; undefined when the webhook has no http(s) URL. */
export function instanceWebhookUrl(options: Pick<WebhookOptions, 'url' | 'byEvents'>, event: EventName): string | undefined {
  if (!/^https?:\/\//.test(options.url)) return undefined;
  return options.byEvents ? joinSuffix(options.url, eventSuffix(event)) : options.url;
}

/** The global webhook's URL for `event`; undefined when no global webhook is configured. */
export function globalWebhookUrl(config: Pick<Config, 'webhookGlobalUrl' | 'webhookGlobalByEvents'>, event: EventName): string | undefined {
  const { webhookGlobalUrl, webhookGlobalByEvents } = config;
  if (!webhookGlobalUrl) return undefined;
  return webhookGlobalByEvents ? joinSuffix(webhookGlobalUrl, eventSuffix(event)) : webhookGlobalUrl;
}

function joinSuffix(url: string, suffix: string): string {
  return `${url.replace(/\/+$/, '')}/${suffix}`;
}
