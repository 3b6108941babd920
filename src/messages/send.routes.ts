// Send routes: text, media, sticker, list, poll, status, location, contact and reaction; each answers 201 with the PENDING record at once.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { pathInstance } from '../platform/http/auth.js';
import { InstanceParams } from '../platform/http/schemas.js';
import type { OutgoingMessages, SendRequest } from './outgoing.js';
import { ContactBody, ListBody, LocationBody, MediaBody, MessageResult, PollBody, ReactionBody, StatusBody, StickerBody, TextBody } from './send-schemas.js';

export interface SendRoutesOptions {
  outgoing: OutgoingMessages;
}

const route = <Body extends TSchema>(summary: string, body: Body) => ({
  config: { access: 'instance' as const },
  schema: {
    tags: ['message'],
    summary,
    params: InstanceParams,
    body,
    headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }),
    response: { 201: MessageResult },
  },
});

/** The request's route, body and Idempotency-Key. */
function sendRequest(request: FastifyRequest): SendRequest {
  const header = request.headers['idempotency-key'];
  return { route: request.routeOptions.url ?? '', body: request.body, idempotencyKey: Array.isArray(header) ? header[0] : header };
}

/** 201 with the record; a repeated Idempotency-Key says so in a header. */
function present(reply: FastifyReply, result: { message: unknown; replayed: boolean }) {
  if (result.replayed) reply.header('Idempotent-Replayed', 'true');
  return reply.status(201).send(result.message);
}

export const sendRoutes: FastifyPluginAsyncTypebox<SendRoutesOptions> = async (app, { outgoing }) => {
  app.post('/message/sendText/:instance', route('Send a text message', TextBody), async (request, reply) =>
    present(reply, await outgoing.text(pathInstance(request), request.body, sendRequest(request))),
  );

  app.post('/message/sendMedia/:instance', route('Send an image, video, audio file or document', MediaBody), async (request, reply) =>
    present(reply, await outgoing.media(pathInstance(request), request.body, sendRequest(request))),
  );

  app.post('/message/sendSticker/:instance', route('Send a sticker (converted to WebP)', StickerBody), async (request, reply) =>
    present(reply, await outgoing.sticker(pathInstance(request), request.body, sendRequest(request))),
  );

  app.post('/message/sendPoll/:instance', route('Send a poll', PollBody), async (request, reply) =>
    present(reply, await outgoing.poll(pathInstance(request), request.body, sendRequest(request))),
  );

  app.post('/message/sendList/:instance', route('Send a list (delivered as a single-choice poll, which every phone shows)', ListBody), async (request, reply) =>
    present(reply, await outgoing.list(pathInstance(request), request.body, sendRequest(request))),
  );

  app.post('/message/sendLocation/:instance', route('Send a location', LocationBody), async (request, reply) =>
    present(reply, await outgoing.location(pathInstance(request), request.body, sendRequest(request))),
  );

  app.post('/message/sendContact/:instance', route('Send one or more contact cards (vCards)', ContactBody), async (request, reply) =>
    present(reply, await outgoing.contact(pathInstance(request), request.body, sendRequest(request))),
  );

  app.post('/message/sendReaction/:instance', route('React to a message with an emoji (an empty reaction removes it)', ReactionBody), async (request, reply) =>
    present(reply, await outgoing.reaction(pathInstance(request), request.body, sendRequest(request))),
  );

  app.post('/message/sendStatus/:instance', route('Post a status (story)', StatusBody), async (request, reply) =>
    present(reply, await outgoing.status(pathInstance(request), request.body, sendRequest(request))),
  );
};
