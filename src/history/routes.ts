// History routes: find stored messages, chats, contacts and statuses; archive a chat; mark a chat unread.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { pathInstance } from '../platform/http/auth.js';
import { InstanceParams } from '../platform/http/schemas.js';
import type { ChatMarks } from './chat-marks.js';
import type { HistoryReads } from './reads.js';
import { answers, ArchiveBody, ChatQuery, FindChatsBody, FindContactsBody, FindMessagesBody, FindStatusBody, MarkUnreadBody } from './schemas.js';

export interface HistoryRoutesOptions {
  reads: HistoryReads;
  marks: ChatMarks;
}

export const historyRoutes: FastifyPluginAsyncTypebox<HistoryRoutesOptions> = async (app, { reads, marks }) => {
  const instanceRoute = { config: { access: 'instance' as const } };

  app.post(
    '/chat/findMessages/:instance',
    {
      ...instanceRoute,
      schema: {
        tags: ['chat'],
        summary: 'Stored messages, newest first, a page at a time',
        params: InstanceParams,
        body: Type.Optional(FindMessagesBody),
        response: answers.messages,
      },
    },
    async (request) => reads.messages(pathInstance(request), request.body ?? {}),
  );

  app.post(
    '/chat/findChats/:instance',
    {
      ...instanceRoute,
      schema: { tags: ['chat'], summary: 'Chats, the most recent first', params: InstanceParams, body: Type.Optional(FindChatsBody), response: answers.chats },
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
        body: Type.Optional(FindContactsBody),
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
        body: Type.Optional(FindStatusBody),
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
      ...instanceRoute,
      schema: { tags: ['chat'], summary: 'Archive or unarchive a chat', params: InstanceParams, body: ArchiveBody, response: answers.archived },
    },
    async (request, reply) => {
      const { archive, chat, lastMessage } = request.body;
      return reply.status(201).send(await marks.archive(pathInstance(request), archive, { chat, lastMessage }));
    },
  );

  app.post(
    '/chat/markChatUnread/:instance',
    {
      ...instanceRoute,
      schema: { tags: ['chat'], summary: 'Mark a chat unread', params: InstanceParams, body: MarkUnreadBody, response: answers.markedUnread },
    },
    async (request, reply) => {
      const { chat, lastMessage } = request.body;
      return reply.status(201).send(await marks.markUnread(pathInstance(request), { chat, lastMessage }));
    },
  );
};
