// A webhook's settings as requests give them (every accepted variant), checked and turned into what is stored.
import { Type } from 'typebox';
import { invalidInput } from '../../core/errors.js';
import type { SinkConfig } from '../../core/event-sink.js';
import { checkLiteralHost } from '../../platform/net/address-policy.js';
import { secretProblem } from '../../platform/util/webhook-secret.js';
import { fieldAt, parseSinkSettings } from '../sink-settings.js';
import { customHeaderProblem } from './headers.js';

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

export interface WebhookSettingsInput {
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

/** What checking webhook settings needs: the outbound address rule, and the box sealing secrets. */
export interface WebhookInputDeps {
  /** OUTBOUND_DENY_PRIVATE: refuse URLs on private or loopback addresses. */
  denyPrivate: boolean;
  seal(secret: string): string;
}

/** Validates webhook settings found at `field` ('' when they came flat) and returns what is stored. */
export function parseWebhookSettings(input: WebhookSettingsInput, field: string, deps: WebhookInputDeps): SinkConfig {
  return parseSinkSettings(input, field, (enabled) => {
    const options: Record<string, unknown> = {};
    const url = input.url?.trim() ?? '';
    if (enabled || url) {
      if (!url) throw invalidInput(`${fieldAt(field, 'url')} is required when the webhook is enabled`);
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw invalidInput(`${fieldAt(field, 'url')} must be an absolute http:// or https:// URL`);
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
        throw invalidInput(`${fieldAt(field, 'url')} must be an absolute http:// or https:// URL`);
      }
      const forbidden = checkLiteralHost(parsed, { denyPrivate: deps.denyPrivate });
      if (forbidden) throw invalidInput(`${fieldAt(field, 'url')} points to a forbidden address (${forbidden.reason})`);
    }
    options.url = url;
    options.byEvents = input.byEvents ?? input.webhookByEvents ?? false;
    options.base64 = input.base64 ?? input.webhookBase64 ?? false;
    options.headers = input.headers ?? {};
    for (const [name, value] of Object.entries(input.headers ?? {})) {
      const problem = customHeaderProblem(name, value);
      if (problem) throw invalidInput(`${fieldAt(field, 'headers')}: ${problem}`);
    }
    // null or "" removes the webhook's own secret (deliveries are then signed with WEBHOOK_SIGNING_SECRET, if set).
    if (input.secret !== undefined && input.secret !== null && input.secret !== '') {
      const problem = secretProblem(input.secret);
      if (problem) throw invalidInput(`${fieldAt(field, 'secret')} ${problem}; null or "" removes it`);
      options.secretSealed = deps.seal(input.secret);
    }
    return options;
  });
}
