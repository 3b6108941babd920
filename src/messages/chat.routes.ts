// Chat operations: privacy settings, presence, marking messages read.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { pathInstance } from '../platform/http/auth.js';
import { ownPresences, presences, type ChatOperations } from './chat-operations.js';
import { createdAnswer, InstanceParams, withExample } from '../platform/http/schemas.js';
import type { Presence } from '../core/connector.js';
import { privacyValues } from '../core/instance.js';

const PrivacyBody = withExample(
  Type.Object({
    readreceipts: Type.Enum([...privacyValues.readreceipts]),
    profile: Type.Enum([...privacyValues.profile]),
    status: Type.Enum([...privacyValues.status]),
    online: Type.Enum([...privacyValues.online]),
    last: Type.Enum([...privacyValues.last]),
    groupadd: Type.Enum([...privacyValues.groupadd]),
  }),
  { readreceipts: 'all', profile: 'contacts', status: 'contacts', online: 'match_last_seen', last: 'contacts', groupadd: 'contacts' },
);

const PresenceOptions = Type.Object({
  presence: Type.Optional(Type.Enum([...presences])),
  delay: Type.Optional(Type.Integer({ minimum: 0, maximum: 300000 })),
  number: Type.Optional(Type.String()),
});
const PresenceBody = withExample(
  Type.Object({
    number: Type.Optional(Type.String({ minLength: 1 })),
    presence: Type.Optional(Type.Enum([...presences])),
    delay: Type.Optional(Type.Integer({ minimum: 0, maximum: 300000 })),
    options: Type.Optional(PresenceOptions),
  }),
  { number: '5511999999999', presence: 'composing', delay: 1200 },
);

const OwnPresenceBody = withExample(
  Type.Object({
    // Optional here so that a missing value is answered with the allowed ones too (by the use case).
    presence: Type.Optional(
      Type.Enum([...ownPresences], { description: "The account's presence for everyone (typing and recording need a chat: /chat/sendPresence)" }),
    ),
  }),
  { presence: 'available' },
);

const NumbersBody = withExample(
  Type.Object({
    numbers: Type.Array(Type.String({ minLength: 1, description: "A phone number with country code, or a person's address (…@s.whatsapp.net, …@lid)" }), {
      minItems: 1,
      uniqueItems: true,
    }),
  }),
  { numbers: ['5511999999999', '5511988887777'] },
);

const NumberAnswer = Type.Object({
  exists: Type.Boolean(),
  jid: Type.String({ description: "The account's address when it exists, else the address the number would have" }),
  number: Type.String({ description: 'The number as asked' }),
  name: Type.Optional(Type.String()),
  lid: Type.Optional(Type.String({ description: "The account's LID address, when known" })),
});

const ReadBody = withExample(
  Type.Object({
    readMessages: Type.Array(
      Type.Object({ remoteJid: Type.String({ minLength: 1 }), fromMe: Type.Optional(Type.Boolean()), id: Type.String({ minLength: 1 }) }),
      { minItems: 1 },
    ),
  }),
  { readMessages: [{ remoteJid: '5511999999999@s.whatsapp.net', fromMe: false, id: '3EB0C431C26A1916E07A' }] },
);

export interface ChatRoutesOptions {
  chats: ChatOperations;
}

export const chatRoutes: FastifyPluginAsyncTypebox<ChatRoutesOptions> = async (app, { chats }) => {
  app.post(
    '/chat/updatePrivacySettings/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['chat'],
        summary: 'Change privacy settings',
        params: InstanceParams,
        body: PrivacyBody,
        response: createdAnswer('{update: "success", data: {…the six privacy fields}}'),
      },
    },
    async (request, reply) => {
      // The six fields only: unknown keys of the body are ignored, neither stored nor echoed.
      const { readreceipts, profile, status, online, last, groupadd } = request.body;
      const data = { readreceipts, profile, status, online, last, groupadd };
      await chats.updatePrivacy(pathInstance(request), data);
      return reply.status(201).send({ update: 'success', data });
    },
  );

  app.post(
    '/chat/sendPresence/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['chat'],
        summary: 'Show a presence (typing, recording…) in a chat for `delay` ms',
        params: InstanceParams,
        body: PresenceBody,
        response: createdAnswer('{presence}'),
      },
    },
    async (request, reply) => {
      const instance = pathInstance(request);
      const body = request.body;
      const number = body.number ?? body.options?.number;
      const presence = (body.presence ?? body.options?.presence) as Presence | undefined;
      const delay = body.delay ?? body.options?.delay ?? 0;
      await chats.sendPresence(instance, { number, presence, delay });
      return reply.status(201).send({ presence });
    },
  );

  app.post(
    '/instance/setPresence/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['instance'],
        summary: "Set the account's own presence (online or offline) for everyone",
        params: InstanceParams,
        body: OwnPresenceBody,
        response: createdAnswer('{presence}'),
      },
    },
    async (request, reply) => {
      const { presence } = request.body;
      await chats.setOwnPresence(pathInstance(request), presence);
      return reply.status(201).send({ presence });
    },
  );

  app.post(
    '/chat/whatsappNumbers/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['chat'],
        summary: 'Check which numbers have a WhatsApp account (one answer per number, in the order asked)',
        params: InstanceParams,
        body: NumbersBody,
        response: { 200: Type.Array(NumberAnswer, { description: 'One entry per number' }) },
      },
    },
    async (request) => chats.whatsappNumbers(pathInstance(request), request.body.numbers),
  );

  app.post(
    '/chat/markMessageAsRead/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['chat'],
        summary: 'Mark received messages as read',
        params: InstanceParams,
        body: ReadBody,
        response: createdAnswer('{message: "Read messages", read: "success"}'),
      },
    },
    async (request, reply) => {
      await chats.markRead(pathInstance(request), request.body.readMessages);
      return reply.status(201).send({ message: 'Read messages', read: 'success' });
    },
  );
};
