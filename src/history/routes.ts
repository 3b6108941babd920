// History routes: find stored messages, chats, contacts and statuses; archive a chat; mark a chat unread.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { pathInstance } from '../platform/http/auth.js';
import { InstanceParams, withExample } from '../platform/http/schemas.js';
import type { ChatMarks } from './chat-marks.js';
import type { HistoryReads } from './reads.js';
import { answers, ArchiveBody, ChatQuery, FindChatsBody, FindContactsBody, FindMessagesBody, FindStatusBody, MarkUnreadBody } from './schemas.js';

export interface HistoryRoutesOptions {
  reads: HistoryReads;
  marks: ChatMarks;
}

export const historyRoutes: FastifyPluginAsyncTypebox<HistoryRoutesOptions> = async (app, { reads, marks }) => {
  const instanceRoute = { config: { access: 'instance' as const } };
  // Archiving and marking unread go through the live connection: served by the node owning the instance.
  const liveRoute = { config: { access: 'instance' as const, live: true } };

  app.post(
    '/chat/findMessages/:instance',
    {
      ...instanceRoute,
      schema: {
        tags: ['chat'],
        summary: 'Stored messages, newest first, a page at a time',
        params: InstanceParams,
        body: Type.Optional(withExample(FindMessagesBody, { where: { key: { remoteJid: '5511999999999@s.whatsapp.net' } }, page: 1, offset: 10 })),
        response: answers.messages,
      },
    },
    async (request) => reads.messages(pathInstance(request), request.body ?? {}),
  );

  app.post(
    '/chat/findChats/:instance',
    {
      ...instanceRoute,
      schema: {
        tags: ['chat'],
        summary: 'Chats, the most recent first',
        params: InstanceParams,
        body: Type.Optional(withExample(FindChatsBody, { where: {}, take: 10 })),
        response: answers.chats,
      },
    },
    async (request) => reads.chats(pathInstance(request), request.body ?? {}),
  );

  app.post(
    '/chat/findContacts/:instance',
    {
      ...instanceRoute,
      schema: {
        tags: ['chat'],
        summary: 'Contacts (people messages were exchanged with)',
        params: InstanceParams,
        body: Type.Optional(withExample(FindContactsBody, { where: { remoteJid: '5511999999999@s.whatsapp.net' } })),
        response: answers.contacts,
      },
    },
    async (request) => reads.contacts(pathInstance(request), request.body ?? {}),
  );

  app.post(
    '/chat/findStatusMessage/:instance',
    {
      ...instanceRoute,
      schema: {
        tags: ['chat'],
        summary: 'The statuses messages went through, in the order recorded',
        params: InstanceParams,
        body: Type.Optional(withExample(FindStatusBody, { where: { remoteJid: '5511999999999@s.whatsapp.net' } })),
        response: answers.statuses,
      },
    },
    async (request) => reads.statuses(pathInstance(request), request.body ?? {}),
  );

  app.get(
    '/chat/findChatByRemoteJid/:instance',
    {
      ...instanceRoute,
      schema: {
        tags: ['chat'],
        summary: 'One chat by its address (null when there is none)',
        params: InstanceParams,
        querystring: ChatQuery,
        response: answers.chat,
      },
    },
    async (request) => reads.chat(pathInstance(request), request.query.remoteJid),
  );

  app.post(
    '/chat/archiveChat/:instance',
    {
      ...liveRoute,
      schema: {
        tags: ['chat'],
        summary: 'Archive or unarchive a chat',
        params: InstanceParams,
        body: withExample(ArchiveBody, { chat: '5511999999999@s.whatsapp.net', archive: true }),
        response: answers.archived,
      },
    },
    async (request, reply) => {
      const { archive, chat, lastMessage } = request.body;
      return reply.status(201).send(await marks.archive(pathInstance(request), archive, { chat, lastMessage }));
    },
  );

  app.post(
    '/chat/markChatUnread/:instance',
    {
      ...liveRoute,
      schema: {
        tags: ['chat'],
        summary: 'Mark a chat unread',
        params: InstanceParams,
        body: withExample(MarkUnreadBody, { chat: '5511999999999@s.whatsapp.net' }),
        response: answers.markedUnread,
      },
    },
    async (request, reply) => {
      const { chat, lastMessage } = request.body;
      return reply.status(201).send(await marks.markUnread(pathInstance(request), { chat, lastMessage }));
    },
  );
};
