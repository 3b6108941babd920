// The webhook's part of `instance/create`: the `webhook` object, or Evolution's flat webhookUrl / webhookByEvents /
// webhookBase64 / webhookEvents fields.
import { Type } from 'typebox';
import type { SinkCreation } from '../../core/event-sink.js';
import { parseWebhookSettings, WebhookInput, type WebhookInputDeps, type WebhookSettingsInput } from './settings-input.js';

interface FlatWebhookFields {
  webhook?: WebhookSettingsInput;
  webhookUrl?: string;
  webhookByEvents?: boolean;
  webhookBase64?: boolean;
  webhookEvents?: string[];
}

export function webhookCreation(deps: WebhookInputDeps): SinkCreation {
  return {
    fields: {
      webhook: Type.Optional(WebhookInput),
      webhookUrl: Type.Optional(Type.String()),
      webhookByEvents: Type.Optional(Type.Boolean()),
      webhookBase64: Type.Optional(Type.Boolean()),
      webhookEvents: Type.Optional(Type.Array(Type.String())),
    },
    parse(fields) {
      const body = fields as FlatWebhookFields;
      const webhook =
        body.webhook ??
        (body.webhookUrl ? { url: body.webhookUrl, byEvents: body.webhookByEvents, base64: body.webhookBase64, events: body.webhookEvents } : undefined);
      // Present means enabled unless `enabled` says otherwise.
      return webhook ? [{ kind: 'webhook', config: parseWebhookSettings({ enabled: true, ...webhook }, 'webhook', deps) }] : [];
    },
  };
}
