// Websocket event settings of an instance: set and find.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { SinkRoutesOptions } from '../../core/event-sink.js';
import { pathInstance } from '../../platform/http/auth.js';
import { createdAnswer, InstanceParams, Nullable, sentAsBuilt, withExample } from '../../platform/http/schemas.js';
import type { SinkConfigs } from '../../events/sink-configs.js';
import { parseSinkSettings } from '../sink-settings.js';

const WebsocketInput = Type.Object({
  enabled: Type.Boolean(),
  events: Type.Optional(Type.Array(Type.String())),
});

export const websocketRoutes =
  (settings: Pick<SinkConfigs, 'get'>): FastifyPluginAsyncTypebox<SinkRoutesOptions> =>
  async (app, { setSink }) => {
    app.post(
      '/websocket/set/:instance',
      {
        config: { access: 'instance' },
        schema: {
          tags: ['websocket'],
          summary: 'Set which events the instance websocket namespace gets',
          params: InstanceParams,
          body: withExample(Type.Object({ websocket: WebsocketInput }), { websocket: { enabled: true, events: ['MESSAGES_UPSERT', 'CONNECTION_UPDATE'] } }),
          response: createdAnswer('{websocket: {instanceName, websocket: {enabled, events}}}'),
        },
      },
      async (request, reply) => {
        const instance = pathInstance(request);
        const config = parseSinkSettings(request.body.websocket, 'websocket');
        await setSink(instance, 'websocket', config);
        return reply.status(201).send({
          websocket: { instanceName: instance.name, websocket: { enabled: config.enabled, events: config.events } },
        });
      },
    );

    app.get(
      '/websocket/find/:instance',
      {
        config: { access: 'instance' },
        ...sentAsBuilt,
        schema: {
          tags: ['websocket'],
          summary: 'The instance websocket settings (null when none)',
          params: InstanceParams,
          response: { 200: Nullable(Type.Object({ enabled: Type.Boolean(), events: Type.Array(Type.String()) }), { description: 'The settings, or null' }) },
        },
      },
      async (request) => {
        const config = settings.get(pathInstance(request).id, 'websocket');
        return config ? { enabled: config.enabled, events: config.events } : null;
      },
    );
  };
