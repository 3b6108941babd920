// Websocket event settings of an instance: set and find.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Services } from '../../services.js';
import { pathInstance } from '../../platform/http/auth.js';
import { createdAnswer, InstanceParams } from '../../platform/http/schemas.js';
import { parseSinkRequest, WebsocketInput } from '../sink-input.js';

export const websocketRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.post(
    '/websocket/set/:instance',
    {
      config: { access: 'instance' },
      schema: { tags: ['websocket'], summary: 'Set which events the instance websocket namespace gets', params: InstanceParams, body: Type.Object({ websocket: WebsocketInput }), response: createdAnswer('{websocket: {instanceName, websocket: {enabled, events}}}') },
    },
    async (request, reply) => {
      const instance = pathInstance(request);
      const parsed = parseSinkRequest('websocket', request.body.websocket, 'websocket', services, instance.name);
      await services.instances.setSink(instance, 'websocket', parsed.config);
      return reply.status(201).send({
        websocket: { instanceName: instance.name, websocket: { enabled: parsed.config.enabled, events: parsed.config.events } },
      });
    },
  );

  app.get(
    '/websocket/find/:instance',
    { config: { access: 'instance' }, schema: { tags: ['websocket'], summary: 'The instance websocket settings (null when none)', params: InstanceParams } },
    async (request) => {
      const config = services.sinks.get(pathInstance(request).id, 'websocket');
      return config ? { enabled: config.enabled, events: config.events } : null;
    },
  );
};
