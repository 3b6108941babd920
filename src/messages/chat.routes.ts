// Chat operations: privacy settings, presence, marking messages read.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Services } from '../services.js';
import { pathInstance } from '../platform/http/auth.js';
import { invalidInput } from '../core/errors.js';
import { createdAnswer, InstanceParams } from '../platform/http/schemas.js';
import type { Presence } from '../core/connector.js';
import { privacyValues, type Instance } from '../core/instance.js';
import { toJid } from './jid.js';

const PrivacyBody = Type.Object({
  readreceipts: Type.Enum([...privacyValues.readreceipts]),
  profile: Type.Enum([...privacyValues.profile]),
  status: Type.Enum([...privacyValues.status]),
  online: Type.Enum([...privacyValues.online]),
  last: Type.Enum([...privacyValues.last]),
  groupadd: Type.Enum([...privacyValues.groupadd]),
});

const presences = ['available', 'unavailable', 'composing', 'recording', 'paused'];
const PresenceOptions = Type.Object({
  presence: Type.Optional(Type.Enum(presences)),
  delay: Type.Optional(Type.Integer({ minimum: 0, maximum: 300000 })),
  number: Type.Optional(Type.String()),
});
const PresenceBody = Type.Object({
  number: Type.Optional(Type.String({ minLength: 1 })),
  presence: Type.Optional(Type.Enum(presences)),
  delay: Type.Optional(Type.Integer({ minimum: 0, maximum: 300000 })),
  options: Type.Optional(PresenceOptions),
});

const ReadBody = Type.Object({
  readMessages: Type.Array(
    Type.Object({ remoteJid: Type.String({ minLength: 1 }), fromMe: Type.Optional(Type.Boolean()), id: Type.String({ minLength: 1 }) }),
    { minItems: 1 },
  ),
});

export const chatRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { lifecycle: runtime } = services;

  const linkedConnector = (instance: Instance, what: string) => {
    const connector = runtime.attach(instance);
    if (connector.state() !== 'open') {
      throw invalidInput(`instance "${instance.name}" is not connected (state ${connector.state()}); ${what} needs a linked instance`);
    }
    return connector;
  };

  app.post(
    '/chat/updatePrivacySettings/:instance',
    { config: { access: 'instance' }, schema: { tags: ['chat'], summary: 'Change privacy settings', params: InstanceParams, body: PrivacyBody, response: createdAnswer('{update: "success", data: {…the six privacy fields}}') } },
    async (request, reply) => {
      const instance = pathInstance(request);
      services.kinds.assertCan(instance, 'privacy');
      // The six fields only: unknown keys of the body are ignored, neither stored nor echoed.
      const { readreceipts, profile, status, online, last, groupadd } = request.body;
      const data = { readreceipts, profile, status, online, last, groupadd };
      const connector = runtime.attach(instance);
      // Stored either way; a linked account gets it now, an unlinked one when it links.
      if (connector.state() === 'open') await connector.privacy?.updatePrivacy(data);
      await services.instances.updatePrivacy(instance, data);
      return reply.status(201).send({ update: 'success', data });
    },
  );

  app.post(
    '/chat/sendPresence/:instance',
    {
      config: { access: 'instance' },
      schema: { tags: ['chat'], summary: 'Show a presence (typing, recording…) in a chat for `delay` ms', params: InstanceParams, body: PresenceBody, response: createdAnswer('{presence}') },
    },
    async (request, reply) => {
      const instance = pathInstance(request);
      services.kinds.assertCan(instance, 'presence');
      const body = request.body;
      const number = body.number ?? body.options?.number;
      const presence = (body.presence ?? body.options?.presence) as Presence | undefined;
      const delay = body.delay ?? body.options?.delay ?? 0;
      if (!number) throw invalidInput('number is required');
      if (!presence) throw invalidInput(`presence is required: one of ${presences.join(', ')}`);
      const chat = toJid(number);
      const connector = linkedConnector(instance, 'sending a presence');
      await connector.presence?.sendPresence(chat, presence);
      if (delay > 0 && presence !== 'paused' && presence !== 'available' && presence !== 'unavailable') {
        // The presence ends after `delay` without holding the request open.
        const timer = setTimeout(() => {
          if (connector.state() === 'open') void connector.presence?.sendPresence(chat, 'paused').catch(() => undefined);
        }, delay);
        timer.unref();
      }
      return reply.status(201).send({ presence });
    },
  );

  app.post(
    '/chat/markMessageAsRead/:instance',
    { config: { access: 'instance' }, schema: { tags: ['chat'], summary: 'Mark received messages as read', params: InstanceParams, body: ReadBody, response: createdAnswer('{message: "Read messages", read: "success"}') } },
    async (request, reply) => {
      const instance = pathInstance(request);
      const connector = linkedConnector(instance, 'marking messages read');
      await connector.messaging.markRead(request.body.readMessages.map((m, i) => ({ remoteJid: toJid(m.remoteJid, `readMessages[${i}].remoteJid`), keyId: m.id })));
      return reply.status(201).send({ message: 'Read messages', read: 'success' });
    },
  );
};
