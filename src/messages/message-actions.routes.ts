// Routes acting on messages and accounts: delete for everyone, edit, block, and a media message's bytes as base64.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { pathInstance } from '../platform/http/auth.js';
import { InstanceParams, withExample } from '../platform/http/schemas.js';
import { blockActions, type BlockOperations } from './block-operations.js';
import type { MediaDownloads } from './media-download.js';
import type { SentMessageChanges } from './sent-message-changes.js';

const Jid = (description: string) => Type.String({ minLength: 1, description });

const DeleteBody = Type.Object({
  id: Type.String({ minLength: 1, description: 'The id of the message to delete' }),
  remoteJid: Jid('The chat of the message (a number or an address)'),
  fromMe: Type.Boolean({ description: 'Must be true: only own messages can be deleted for everyone' }),
  participant: Type.Optional(Type.String({ description: "A group message's sender (deleting others' messages is not supported yet)" })),
});

const MessageKey = Type.Object({
  id: Type.String({ minLength: 1 }),
  remoteJid: Jid('The chat of the message'),
  fromMe: Type.Boolean(),
});

const UpdateMessageBody = Type.Object({
  number: Jid('The chat of the message (a number or an address); must be the chat of key.remoteJid'),
  text: Type.String({ minLength: 1, description: 'The new text' }),
  key: MessageKey,
});

const BlockBody = Type.Object({
  number: Jid('The account to block or unblock (a number or an address)'),
  status: Type.Enum([...blockActions]),
});

const MediaBody = Type.Object({
  message: Type.Object(
    {
      key: Type.Optional(Type.Object({ id: Type.Optional(Type.String({ minLength: 1 })) }, { additionalProperties: true })),
      message: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The content; absent: the stored message of key.id' })),
    },
    { additionalProperties: true, description: 'A full message {key, message} (e.g. the data of a messages.upsert event), or {key: {id}} of a stored one' },
  ),
  convertToMp4: Type.Optional(Type.Boolean({ description: 'Audio only: answered as MP4 with AAC (audio/mp4)' })),
});

/** A protocol message that left (Evolution's raw form: enums as names, 64-bit numbers as strings). */
const ProtocolAnswer = (description: string) =>
  Type.Object(
    {
      key: Type.Object({ remoteJid: Type.String(), fromMe: Type.Boolean(), id: Type.String() }),
      message: Type.Object({ protocolMessage: Type.Object({}, { additionalProperties: true }) }),
      messageTimestamp: Type.String({ description: 'Epoch seconds' }),
      status: Type.String(),
    },
    { description },
  );

const MediaAnswer = Type.Object(
  {
    mediaType: Type.String({ description: 'The content key: imageMessage, audioMessage, …' }),
    fileName: Type.String(),
    caption: Type.Union([Type.String(), Type.Null()]),
    size: Type.Object({
      fileLength: Type.Number({ description: 'Bytes (a number, where Evolution gives a 64-bit {low, high} object)' }),
      height: Type.Optional(Type.Number()),
      width: Type.Optional(Type.Number()),
    }),
    mimetype: Type.String(),
    base64: Type.String(),
    buffer: Type.Null(),
  },
  { description: 'The media and its plain bytes as base64' },
);

export interface MessageActionRoutesOptions {
  changes: SentMessageChanges;
  blocks: BlockOperations;
  media: MediaDownloads;
}

export const messageActionRoutes: FastifyPluginAsyncTypebox<MessageActionRoutesOptions> = async (app, { changes, blocks, media }) => {
  app.delete(
    '/chat/deleteMessageForEveryone/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['chat'],
        summary: 'Delete one of the own sent messages for everyone (JSON body)',
        params: InstanceParams,
        body: withExample(DeleteBody, { id: '3EB0C431C26A1916E07A4F', remoteJid: '5511999999999@s.whatsapp.net', fromMe: true }),
        response: { 201: ProtocolAnswer('The revoke message that was sent') },
      },
    },
    async (request, reply) => reply.status(201).send(await changes.deleteForEveryone(pathInstance(request), request.body)),
  );

  app.post(
    '/chat/updateMessage/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['chat'],
        summary: 'Edit the text of one of the own text messages (within 15 minutes of sending it)',
        params: InstanceParams,
        body: withExample(UpdateMessageBody, {
          number: '5511999999999',
          text: 'The meeting moved to 15:00',
          key: { id: '3EB0C431C26A1916E07A4F', remoteJid: '5511999999999@s.whatsapp.net', fromMe: true },
        }),
        response: { 200: ProtocolAnswer('The edit message that was sent') },
      },
    },
    async (request) => changes.edit(pathInstance(request), request.body),
  );

  app.post(
    '/chat/updateBlockStatus/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['chat'],
        summary: 'Block or unblock an account',
        params: InstanceParams,
        body: withExample(BlockBody, { number: '5511999999999', status: 'block' }),
        response: { 201: Type.Object({ block: Type.Literal('success') }) },
      },
    },
    async (request, reply) => {
      await blocks.updateBlockStatus(pathInstance(request), request.body.number, request.body.status);
      return reply.status(201).send({ block: 'success' });
    },
  );

  app.post(
    '/chat/getBase64FromMediaMessage/:instance',
    {
      config: { access: 'instance', live: true },
      schema: {
        tags: ['chat'],
        summary: "A media message's file as base64 (the message given whole, or a stored one by its id)",
        params: InstanceParams,
        body: withExample(MediaBody, { message: { key: { id: '3EB0C431C26A1916E07A4F' } }, convertToMp4: false }),
        response: { 201: MediaAnswer },
      },
    },
    async (request, reply) => reply.status(201).send(await media.base64Of(pathInstance(request), request.body.message, request.body.convertToMp4 === true)),
  );
};
