// Behaviour settings of an instance: set and find.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { InstanceService } from './service.js';
import { pathInstance } from '../platform/http/auth.js';
import { createdAnswer, InstanceParams, sentAsBuilt, settingsFields, withExample } from '../platform/http/schemas.js';
import { settingsSnake } from '../core/instance.js';
import { pacingField } from './pacing-field.js';

const SettingsBody = Type.Object({ ...settingsFields, ...pacingField });

export const settingsRoutes: FastifyPluginAsyncTypebox<{ instances: Pick<InstanceService, 'updateSettings' | 'pacingOf'> }> = async (app, { instances }) => {
  app.post(
    '/settings/set/:instance',
    {
      config: { access: 'instance' },
      schema: {
        tags: ['settings'],
        summary: 'Change behaviour settings (fields left out keep their value)',
        params: InstanceParams,
        body: withExample(SettingsBody, {
          rejectCall: true,
          msgCall: 'Calls are not answered here; please write',
          groupsIgnore: false,
          alwaysOnline: false,
          readMessages: true,
          readStatus: false,
          syncFullHistory: false,
        }),
        response: createdAnswer('{settings: {instanceName, settings: {…snake_case settings without msg_call, pacing when given}}}'),
      },
    },
    async (request, reply) => {
      const instance = pathInstance(request);
      const { pacing, ...changes } = request.body;
      const updated = await instances.updateSettings(instance, changes, pacing);
      // Evolution's answer, with the pacing now in effect when the request changed it (a Switchboard extension).
      const settings = { ...settingsSnake(updated.settings, false), ...(pacing ? { pacing: instances.pacingOf(updated) } : {}) };
      return reply.status(201).send({ settings: { instanceName: updated.name, settings } });
    },
  );

  app.get(
    '/settings/find/:instance',
    {
      config: { access: 'instance' },
      ...sentAsBuilt,
      schema: {
        tags: ['settings'],
        summary: 'Current behaviour settings',
        params: InstanceParams,
        response: {
          200: Type.Object(
            {
              rejectCall: Type.Boolean(),
              msgCall: Type.String(),
              groupsIgnore: Type.Boolean(),
              alwaysOnline: Type.Boolean(),
              readMessages: Type.Boolean(),
              readStatus: Type.Boolean(),
              syncFullHistory: Type.Boolean(),
              wavoipToken: Type.String({ description: 'Always empty (calls through Wavoip are not supported)' }),
              pacing: Type.Object({}, { additionalProperties: true, description: 'The pacing in effect' }),
            },
            { description: 'The settings (camelCase, as Evolution answers them)' },
          ),
        },
      },
    },
    async (request) => {
      const instance = pathInstance(request);
      return { ...instance.settings, wavoipToken: '', pacing: instances.pacingOf(instance) };
    },
  );
};
