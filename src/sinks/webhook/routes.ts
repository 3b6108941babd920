// Webhook settings of an instance, its delivery log and replay.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import { pathInstance } from '../../platform/http/auth.js';
import type { Db } from '../../platform/store/db.js';
import { invalidInput, notFound } from '../../core/errors.js';
import type { SinkRoutesOptions } from '../../core/event-sink.js';
import { createdAnswer, InstanceParams, Nullable, sentAsBuilt, withExample } from '../../platform/http/schemas.js';
import type { SinkConfigs } from '../../events/sink-configs.js';
import { parseWebhookSettings, WebhookInput, type WebhookInputDeps, type WebhookSettingsInput } from './settings-input.js';
import { webhookOptions } from './options.js';
import { redactUrl, restoreHiddenPassword } from './urls.js';
import { InvalidCursorError, listDeliveries, redeliver, type DeliveryScope } from './log.js';

const WebhookFound = Nullable(
  Type.Object({
    enabled: Type.Boolean(),
    url: Type.String({ description: 'A password in the URL is not shown again' }),
    events: Type.Array(Type.String()),
    webhookByEvents: Type.Boolean(),
    webhookBase64: Type.Boolean(),
    headers: Type.Record(Type.String(), Type.String(), { description: 'Header names; their values are shown as [redacted]' }),
    signed: Type.Boolean(),
    updatedAt: Type.String(),
  }),
  { description: 'The webhook settings, or null when none' },
);

const DeliveryPage = Type.Object({
  deliveries: Type.Array(
    Type.Object({
      id: Type.Integer(),
      eventId: Type.String(),
      event: Type.String(),
      target: Type.String({ description: 'instance or global' }),
      url: Type.String(),
      status: Type.Enum(['pending', 'delivered', 'dead', 'cancelled']),
      attempts: Type.Integer(),
      lastStatus: Nullable(Type.Integer()),
      lastError: Nullable(Type.String()),
      nextAttemptAt: Nullable(Type.String()),
      createdAt: Type.String(),
      deliveredAt: Nullable(Type.String()),
    }),
  ),
  nextCursor: Nullable(Type.String({ description: 'Pass it as cursor for the next (older) page' })),
});

/** What the webhook routes work with, besides how a set route stores settings. */
export interface WebhookRoutesDeps {
  db: Db;
  settings: Pick<SinkConfigs, 'get'>;
  input: WebhookInputDeps;
  /** Wakes the delivery of queued deliveries (after a replay). */
  wake(): void;
}

/**
 * The webhook object wrapped (`{webhook: {…}}`) or flat (`{url, …}`): one object schema with both, so the wrapped
 * object's fields are validated as strictly as the flat ones and errors name them (`webhook.enabled`).
 */
const WebhookSetBody = withExample(
  Type.Object(
    { ...WebhookInput.properties, webhook: Type.Optional(WebhookInput) },
    { description: 'Webhook settings, flat or wrapped in `webhook` (unknown keys are ignored)' },
  ),
  {
    webhook: {
      enabled: true,
      url: 'http://localhost:9000/hooks',
      webhookByEvents: false,
      webhookBase64: false,
      events: ['MESSAGES_UPSERT', 'MESSAGES_UPDATE'],
    },
  },
);

/** The deliveries a request may see: the instance's own; the global webhook's too with the global key. */
function scopeOf(request: FastifyRequest): DeliveryScope {
  return { instanceId: pathInstance(request).id, withGlobal: request.principal?.kind === 'global' };
}

export const webhookRoutes =
  (deps: WebhookRoutesDeps): FastifyPluginAsyncTypebox<SinkRoutesOptions> =>
  async (app, { setSink }) => {
    const access = { access: 'instance' as const };

    app.post(
      '/webhook/set/:instance',
      {
        config: access,
        schema: {
          tags: ['webhook'],
          summary: 'Set the instance webhook (the webhook object wrapped or flat)',
          params: InstanceParams,
          body: WebhookSetBody,
          response: createdAnswer('{webhook: {instanceName, webhook: {url, events, enabled, webhookByEvents, webhookBase64, signed}}}'),
        },
      },
      async (request, reply) => {
        const instance = pathInstance(request);
        const body: { webhook?: WebhookSettingsInput } & WebhookSettingsInput = request.body;
        const input: WebhookSettingsInput = body.webhook ?? body;
        const settings = parseWebhookSettings(input, body.webhook ? 'webhook' : '', deps.input);
        // What the request leaves out keeps its value (as Evolution's update does): the interface's webhook/set body has
        // no headers, and a client sending it must not lose the headers given at creation.
        const previous = deps.settings.get(instance.id, 'webhook');
        if (previous) {
          const kept = webhookOptions(previous);
          const options = settings.options;
          if (input.secret === undefined && kept.secretSealed) options.secretSealed = kept.secretSealed;
          if (input.headers === undefined) options.headers = kept.headers;
          if (input.byEvents === undefined && input.webhookByEvents === undefined) options.byEvents = kept.byEvents;
          if (input.base64 === undefined && input.webhookBase64 === undefined) options.base64 = kept.base64;
          // The URL as webhook/find shows it (password hidden) sent back: the stored password stays.
          if (typeof options.url === 'string') options.url = restoreHiddenPassword(options.url, kept.url);
        }
        await setSink(instance, 'webhook', settings);
        const options = webhookOptions(settings);
        return reply.status(201).send({
          webhook: {
            instanceName: instance.name,
            webhook: {
              url: redactUrl(options.url),
              events: settings.events,
              enabled: settings.enabled,
              webhookByEvents: options.byEvents,
              webhookBase64: options.base64,
              signed: Boolean(options.secretSealed),
            },
          },
        });
      },
    );

    app.get(
      '/webhook/find/:instance',
      {
        config: access,
        ...sentAsBuilt,
        schema: { tags: ['webhook'], summary: 'The instance webhook settings (null when none)', params: InstanceParams, response: { 200: WebhookFound } },
      },
      async (request) => {
        const instance = pathInstance(request);
        const config = deps.settings.get(instance.id, 'webhook');
        if (!config) return null;
        const options = webhookOptions(config);
        return {
          enabled: config.enabled,
          // Like header values, a password in the URL is not shown again.
          url: redactUrl(options.url),
          events: config.events,
          webhookByEvents: options.byEvents,
          webhookBase64: options.base64,
          // Header values often carry credentials: only their names are shown.
          headers: Object.fromEntries(Object.keys(options.headers).map((name) => [name, '[redacted]'])),
          signed: Boolean(options.secretSealed),
          updatedAt: new Date(config.updatedAt).toISOString(),
        };
      },
    );

    app.get(
      '/webhook/deliveries/:instance',
      {
        config: access,
        ...sentAsBuilt,
        schema: {
          tags: ['webhook'],
          summary: 'Delivery log of the instance (newest first)',
          response: { 200: DeliveryPage },
          params: InstanceParams,
          querystring: Type.Object({
            status: Type.Optional(Type.Enum(['pending', 'delivered', 'dead', 'cancelled'])),
            limit: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: '1–200, default 50' })),
            cursor: Type.Optional(Type.String()),
          }),
        },
      },
      async (request) => {
        pathInstance(request);
        const limit = request.query.limit === undefined ? 50 : Number(request.query.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw invalidInput('limit must be a whole number from 1 to 200');
        try {
          return await listDeliveries(deps.db, scopeOf(request), { status: request.query.status, limit, cursor: request.query.cursor });
        } catch (error) {
          if (error instanceof InvalidCursorError) throw invalidInput('cursor is not valid; pass the nextCursor of a previous answer');
          throw error;
        }
      },
    );

    app.post(
      '/webhook/redeliver/:instance',
      {
        config: access,
        schema: {
          tags: ['webhook'],
          summary: 'Deliver again one delivery ({deliveryId}) or every dead-lettered one ({status: "dead"})',
          params: InstanceParams,
          body: withExample(
            Type.Object({
              deliveryId: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^[0-9]+$' })])),
              status: Type.Optional(Type.Literal('dead')),
            }),
            { status: 'dead' },
          ),
          response: createdAnswer('{requeued: <number of deliveries queued again>}'),
        },
      },
      async (request, reply) => {
        const instance = pathInstance(request);
        const { deliveryId, status } = request.body;
        if ((deliveryId === undefined) === (status === undefined)) {
          throw invalidInput('give either deliveryId or status: "dead"');
        }
        const result =
          deliveryId !== undefined
            ? await redeliver(deps.db, scopeOf(request), { deliveryId: Number(deliveryId) })
            : await redeliver(deps.db, scopeOf(request), { status: 'dead' });
        if (deliveryId !== undefined && result.requeued === 0) throw notFound(`delivery ${deliveryId} does not exist for instance "${instance.name}"`);
        deps.wake();
        return reply.status(201).send(result);
      },
    );
  };
