// Send routes: text, media, sticker, list, poll, status, location, contact and reaction; each answers 201 with the PENDING record at once.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import type { Instance } from '../core/instance.js';
import { pathInstance } from '../platform/http/auth.js';
import { InstanceParams } from '../platform/http/schemas.js';
import { ButtonsBody } from './buttons-schema.js';
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

/** One send use case of OutgoingMessages, as a route calls it. */
type SendUseCase<Body extends TSchema> = (instance: Instance, body: Static<Body>, request: SendRequest) => Promise<{ message: unknown; replayed: boolean }>;

export const sendRoutes: FastifyPluginAsyncTypebox<SendRoutesOptions> = async (app, { outgoing }) => {
  /** `POST /message/<name>/:instance`: parse, call the use case, answer 201 with the record. */
  const sendRoute = <Body extends TSchema>(name: string, summary: string, body: Body, useCase: SendUseCase<Body>) =>
    app.post(`/message/${name}/:instance`, route(summary, body), async (request, reply) =>
      present(reply, await useCase(pathInstance(request), request.body as Static<Body>, sendRequest(request))),
    );

  sendRoute('sendText', 'Send a text message', TextBody, (i, b, r) => outgoing.text(i, b, r));
  sendRoute('sendMedia', 'Send an image, video, audio file or document', MediaBody, (i, b, r) => outgoing.media(i, b, r));
  sendRoute('sendSticker', 'Send a sticker (converted to WebP)', StickerBody, (i, b, r) => outgoing.sticker(i, b, r));
  sendRoute('sendPoll', 'Send a poll', PollBody, (i, b, r) => outgoing.poll(i, b, r));
  sendRoute('sendList', 'Send a list (delivered as a single-choice poll, which every phone shows)', ListBody, (i, b, r) => outgoing.list(i, b, r));
  sendRoute('sendLocation', 'Send a location', LocationBody, (i, b, r) => outgoing.location(i, b, r));
  sendRoute('sendContact', 'Send one or more contact cards (vCards)', ContactBody, (i, b, r) => outgoing.contact(i, b, r));
  sendRoute('sendReaction', 'React to a message with an emoji (an empty reaction removes it)', ReactionBody, (i, b, r) => outgoing.reaction(i, b, r));
  sendRoute('sendButtons', 'Send a message with buttons (reply, copy, url, call or PIX)', ButtonsBody, (i, b, r) => outgoing.buttons(i, b, r));
  sendRoute('sendStatus', 'Post a status (story)', StatusBody, (i, b, r) => outgoing.status(i, b, r));
};
