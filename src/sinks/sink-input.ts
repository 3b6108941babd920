// Parsing of event-destination settings from requests (webhook, websocket) in every accepted variant.
import { Type } from 'typebox';
import { invalidInput } from '../core/errors.js';
import { eventNames, resolveEventName, type EventName } from '../core/event-catalog.js';
import type { SinkConfig, SinkKind } from '../events/sink-configs.js';
import { checkLiteralHost } from '../platform/net/address-policy.js';
import { secretProblem } from '../platform/util/webhook-secret.js';
import { customHeaderProblem } from './webhook/headers.js';
import { brokerNameProblem } from './broker-relay/names.js';
import type { Services } from '../services.js';

export const WebhookInput = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    url: Type.Optional(Type.String()),
    byEvents: Type.Optional(Type.Boolean()),
    webhookByEvents: Type.Optional(Type.Boolean()),
    base64: Type.Optional(Type.Boolean()),
    webhookBase64: Type.Optional(Type.Boolean()),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    events: Type.Optional(Type.Array(Type.String())),
    secret: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { description: 'Standard Webhooks secret (whsec_<base64>) to sign deliveries with; null or "" removes it' }),
    ),
  },
  { description: 'Webhook settings (unknown keys are ignored)' },
);

export const WebsocketInput = Type.Object({
  enabled: Type.Boolean(),
  events: Type.Optional(Type.Array(Type.String())),
});

export interface RawSinkInput {
  enabled?: boolean;
  url?: string;
  byEvents?: boolean;
  webhookByEvents?: boolean;
  base64?: boolean;
  webhookBase64?: boolean;
  headers?: Record<string, string>;
  events?: string[];
  secret?: string | null;
}

/** A field's name inside its parent (`webhook.url`), or alone when the settings came flat (`url`). */
const at = (parent: string, name: string) => (parent ? `${parent}.${name}` : name);

export function parseEvents(events: string[] | undefined, field: string): EventName[] {
  const out: EventName[] = [];
  (events ?? []).forEach((value, index) => {
    const name = resolveEventName(value);
    if (!name) {
      throw invalidInput(`${at(field, 'events')}[${index}] "${value}" is not an event name; use one of: ${eventNames.join(', ')}`);
    }
    if (!out.includes(name)) out.push(name);
  });
  return out;
}

/**
 * Validates one destination's settings and returns what is stored. `instanceName`: the instance they are for (a broker
 * publishes under its name, which the broker may not take).
 */
export function parseSinkRequest(
  kind: SinkKind,
  input: RawSinkInput,
  field: string,
  services: Pick<Services, 'config' | 'box'>,
  instanceName: string,
): { kind: SinkKind; config: SinkConfig } {
  const enabled = input.enabled ?? true;
  if ((kind === 'rabbitmq' || kind === 'nats') && enabled) {
    const { rabbitmqExchangeName, natsPrefixKey } = services.config;
    const problem = brokerNameProblem(kind, instanceName, { rabbitmqExchange: rabbitmqExchangeName, natsPrefix: natsPrefixKey });
    if (problem) throw invalidInput(problem);
  }
  const events = parseEvents(input.events, field);
  const options: Record<string, unknown> = {};
  if (kind === 'webhook') {
    const url = input.url?.trim() ?? '';
    if (enabled || url) {
      if (!url) throw invalidInput(`${at(field, 'url')} is required when the webhook is enabled`);
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw invalidInput(`${at(field, 'url')} must be an absolute http:// or https:// URL`);
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
        throw invalidInput(`${at(field, 'url')} must be an absolute http:// or https:// URL`);
      }
      const forbidden = checkLiteralHost(parsed, { denyPrivate: services.config.outboundDenyPrivate });
      if (forbidden) throw invalidInput(`${at(field, 'url')} points to a forbidden address (${forbidden.reason})`);
    }
    options.url = url;
    options.byEvents = input.byEvents ?? input.webhookByEvents ?? false;
    options.base64 = input.base64 ?? input.webhookBase64 ?? false;
    options.headers = input.headers ?? {};
    for (const [name, value] of Object.entries(input.headers ?? {})) {
      const problem = customHeaderProblem(name, value);
      if (problem) throw invalidInput(`${at(field, 'headers')}: ${problem}`);
    }
    // null or "" removes the webhook's own secret (deliveries are then signed with WEBHOOK_SIGNING_SECRET, if set).
    if (input.secret !== undefined && input.secret !== null && input.secret !== '') {
      const problem = secretProblem(input.secret);
      if (problem) throw invalidInput(`${at(field, 'secret')} ${problem}; null or "" removes it`);
      options.secretSealed = services.box.seal(input.secret);
    }
  }
  return { kind, config: { enabled, events: enabled ? events : [], options, updatedAt: Date.now() } };
}
