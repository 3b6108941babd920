// Until the sinks implement SinkCreation themselves: the create body's destination fields and today's parser behind it.
import { Type, type Static } from 'typebox';
import type { SinkCreation } from './core/event-sink.js';
import type { Config } from './platform/config.js';
import type { SecretsBox } from './platform/util/secrets-box.js';
import { parseSinkRequest, WebhookInput } from './sinks/sink-input.js';

const toggle = Type.Optional(Type.Object({ enabled: Type.Optional(Type.Boolean()), events: Type.Optional(Type.Array(Type.String())) }));

const fields = {
  webhook: Type.Optional(WebhookInput),
  // As Evolution takes them at creation: present means enabled unless `enabled` says otherwise.
  websocket: toggle,
  rabbitmq: toggle,
  nats: toggle,
  webhookUrl: Type.Optional(Type.String()),
  webhookByEvents: Type.Optional(Type.Boolean()),
  webhookBase64: Type.Optional(Type.Boolean()),
  webhookEvents: Type.Optional(Type.Array(Type.String())),
};
const CreateSinkFields = Type.Object(fields);

export function legacySinkCreation(services: { config: Config; box: SecretsBox }): SinkCreation {
  return {
    fields,
    parse(raw, name) {
      // The body passed the schema built from `fields` above.
      const body = raw as Static<typeof CreateSinkFields>;
      const webhook =
        body.webhook ??
        (body.webhookUrl ? { url: body.webhookUrl, byEvents: body.webhookByEvents, base64: body.webhookBase64, events: body.webhookEvents } : undefined);
      const sinks = [];
      if (webhook) sinks.push(parseSinkRequest('webhook', { enabled: true, ...webhook }, 'webhook', services, name));
      if (body.websocket) sinks.push(parseSinkRequest('websocket', { enabled: true, ...body.websocket }, 'websocket', services, name));
      for (const kind of ['rabbitmq', 'nats'] as const) {
        const input = body[kind];
        if (input) sinks.push(parseSinkRequest(kind, { enabled: true, ...input }, kind, services, name));
      }
      return sinks;
    },
  };
}
