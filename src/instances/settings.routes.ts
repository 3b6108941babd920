// Behaviour settings of an instance: set and find.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { InstanceService } from './service.js';
import { pathInstance } from '../platform/http/auth.js';
import { createdAnswer, InstanceParams, settingsFields } from '../platform/http/schemas.js';
import { settingsSnake } from '../core/instance.js';

const SettingsBody = Type.Object(settingsFields);

export const settingsRoutes: FastifyPluginAsyncTypebox<{ instances: Pick<InstanceService, 'updateSettings'> }> = async (app, { instances }) => {
  app.post(
    '/settings/set/:instance',
    {
      config: { access: 'instance' },
      schema: {
        tags: ['settings'],
        summary: 'Change behaviour settings (fields left out keep their value)',
        params: InstanceParams,
        body: SettingsBody,
        response: createdAnswer('{settings: {instanceName, settings: {…snake_case settings without msg_call}}}'),
      },
    },
    async (request, reply) => {
      const instance = pathInstance(request);
      const updated = await instances.updateSettings(instance, request.body);
      return reply.status(201).send({ settings: { instanceName: updated.name, settings: settingsSnake(updated.settings, false) } });
    },
  );

  app.get(
    '/settings/find/:instance',
    { config: { access: 'instance' }, schema: { tags: ['settings'], summary: 'Current behaviour settings', params: InstanceParams } },
    async (request) => {
      const { settings } = pathInstance(request);
      return { ...settings, wavoipToken: '' };
    },
  );
};
