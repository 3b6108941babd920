// Where a webhook delivery of an event goes: the webhook's URL, with the event's suffix when it is set "by events".
import type { Config } from '../../platform/config.js';
import { eventSuffix, type EventName } from '../../core/event-catalog.js';
import type { WebhookOptions } from './options.js';

/** The instance webhook's URL for `event`; undefined when the webhook has no http(s) URL. */
export function instanceWebhookUrl(options: Pick<WebhookOptions, 'url' | 'byEvents'>, event: EventName): string | undefined {
  if (!/^https?:\/\//.test(options.url)) return undefined;
  return options.byEvents ? withEventSuffix(options.url, event) : options.url;
}

/** The global webhook's URL for `event`; undefined when no global webhook is configured. */
export function globalWebhookUrl(config: Pick<Config, 'webhookGlobalUrl' | 'webhookGlobalByEvents'>, event: EventName): string | undefined {
  const { webhookGlobalUrl, webhookGlobalByEvents } = config;
  if (!webhookGlobalUrl) return undefined;
  return webhookGlobalByEvents ? withEventSuffix(webhookGlobalUrl, event) : webhookGlobalUrl;
}

/**
 * The URL with the event's suffix as a last path segment (`…/hook?token=a` → `…/hook/messages-upsert?token=a`). Evolution
 * appends it to the whole string, which puts it inside a query string; the query stays a query here. A fragment is
 * never sent, so it is dropped.
 */
export function withEventSuffix(url: string, event: EventName): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `${url.replace(/\/+$/, '')}/${eventSuffix(event)}`;
  }
  parsed.hash = '';
  parsed.pathname = `${parsed.pathname.replace(/\/+$/, '')}/${eventSuffix(event)}`;
  return parsed.toString();
}

/**
 * The URL with its password hidden (`https://user:***@host/…`), for everything but the request itself: API answers,
 * the delivery log and the envelope's `destination`, which may be copied to the global webhook.
 */
export function redactUrl(url: string): string {
  if (!url.includes('@')) return url;
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

/** `url` with the password of `stored` where `url` carries the hidden one (`***`) for the same user at the same host. */
export function restoreHiddenPassword(url: string, stored: string): string {
  if (!url.includes(':***@')) return url;
  try {
    const given = new URL(url);
    const previous = new URL(stored);
    if (given.password !== '***' || given.host !== previous.host || given.username !== previous.username || !previous.password) return url;
    given.password = previous.password;
    return given.toString();
  } catch {
    return url;
  }
}
