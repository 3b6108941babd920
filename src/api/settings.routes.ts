// Behaviour settings of an instance: set and find.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Services } from '../services.js';
import { pathInstance } from './auth.js';
import { InstanceParams } from './schemas.js';
import { settingsSnake } from '../instances/model.js';

const SettingsBody = Type.Object({
  rejectCall: Type.Optional(Type.Boolean()),
  msgCall: Type.Optional(Type.String({ maxLength: 1000 })),
  groupsIgnore: Type.Optional(Type.Boolean()),
  alwaysOnline: Type.Optional(Type.Boolean()),
  readMessages: Type.Optional(Type.Boolean()),
  readStatus: Type.Optional(Type.Boolean()),
  syncFullHistory: Type.Optional(Type.Boolean()),
});

export const settingsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.post(
    '/settings/set/:instance',
    {
      config: { access: 'instance' },
      schema: { tags: ['settings'], summary: 'Change behaviour settings (fields left out keep their value)', params: InstanceParams, body: SettingsBody },
    },
    async (request, reply) => {
      const instance = pathInstance(request);
      const body = request.body;
      const next = { ...instance.settings };
      for (const key of Object.keys(next) as (keyof typeof next)[]) {
        if (body[key] !== undefined) (next as Record<string, unknown>)[key] = body[key];
      }
      const updated = await services.instances.updateSettings(instance, next);
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
