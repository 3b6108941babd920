// Send routes: text, media, sticker, list, poll, status, location, contact, reaction, template, voice note and round video; each answers 201 with the PENDING record at once.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import type { Instance } from '../core/instance.js';
import { pathInstance } from '../platform/http/auth.js';
import { InstanceParams, withExample } from '../platform/http/schemas.js';
import { ButtonsBody } from './buttons-schema.js';
import { TemplateSendBody } from './template-schemas.js';
import type { OutgoingMessages, SendRequest } from './outgoing.js';
import { formatBytes } from '../media/size.js';
import { isMultipart, multipartBody, registerMultipart } from '../platform/http/multipart-body.js';
import {
  ContactBody,
  ListBody,
  LocationBody,
  MediaBody,
  MessageResult,
  PollBody,
  PtvBody,
  ReactionBody,
  StatusBody,
  StickerBody,
  TextBody,
  WhatsAppAudioBody,
} from './send-schemas.js';

export interface SendRoutesOptions {
  outgoing: OutgoingMessages;
  /** The media size limit: an uploaded file (multipart part `file`) larger answers 413. */
  mediaMaxBytes: number;
}

const route = <Body extends TSchema>(summary: string, body: Body, uploads = false) => ({
  config: { access: 'instance' as const, live: true },
  schema: {
    tags: ['message'],
    summary,
    params: InstanceParams,
    body,
    headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }),
    response: { 201: MessageResult },
    ...(uploads ? { consumes: ['application/json', 'multipart/form-data'] } : {}),
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

export const sendRoutes: FastifyPluginAsyncTypebox<SendRoutesOptions> = async (app, { outgoing, mediaMaxBytes }) => {
  const limits = { maxBytes: mediaMaxBytes, limitText: formatBytes(mediaMaxBytes) };

  /**
   * `POST /message/<name>/:instance`: parse, call the use case, answer 201 with the record. `upload`: the body field a
   * multipart part `file` fills; the route then sits in a scope of its own that also parses multipart/form-data (the
   * other routes keep answering it 415 and carry none of the multipart plugin's hooks). Awaited for such a route, so
   * the routes are registered in the order written.
   */
  const sendRoute = <Body extends TSchema>(name: string, summary: string, body: Body, useCase: SendUseCase<Body>, upload?: string) => {
    const options = route(summary, body, upload !== undefined);
    const handler = async (request: FastifyRequest, reply: FastifyReply) =>
      present(reply, await useCase(pathInstance(request), request.body as Static<Body>, sendRequest(request)));
    if (upload === undefined) return app.post(`/message/${name}/:instance`, options, handler);
    return app.register(async (scope) => {
      await registerMultipart(scope, limits);
      scope.post(
        `/message/${name}/:instance`,
        {
          ...options,
          // After authentication (onRequest), before validation: the form is read only for a caller allowed to send, and
          // becomes the body the schema then validates, as a JSON body would be.
          preValidation: async (request) => {
            if (isMultipart(request)) request.body = await multipartBody(request, { field: upload, schema: body, limits });
          },
        },
        handler,
      );
    });
  };

  sendRoute('sendText', 'Send a text message', withExample(TextBody, { number: '5511999999999', text: 'Hello from Switchboard', delay: 1200 }), (i, b, r) =>
    outgoing.text(i, b, r),
  );
  await sendRoute(
    'sendMedia',
    'Send an image, video, audio file or document',
    withExample(MediaBody, {
      number: '5511999999999',
      mediatype: 'image',
      mimetype: 'image/png',
      caption: 'A dot',
      media: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
      fileName: 'dot.png',
    }),
    (i, b, r) => outgoing.media(i, b, r),
    'media',
  );
  await sendRoute(
    'sendSticker',
    'Send a sticker (converted to WebP)',
    withExample(StickerBody, {
      number: '5511999999999',
      sticker: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
    }),
    (i, b, r) => outgoing.sticker(i, b, r),
    'sticker',
  );
  sendRoute(
    'sendPoll',
    'Send a poll',
    withExample(PollBody, { number: '5511999999999', name: 'Lunch?', selectableCount: 1, values: ['Pizza', 'Salad'] }),
    (i, b, r) => outgoing.poll(i, b, r),
  );
  sendRoute(
    'sendList',
    'Send a list (delivered as a single-choice poll, which every phone shows)',
    withExample(ListBody, {
      number: '5511999999999',
      title: 'Menu',
      description: 'Pick one',
      buttonText: 'Open',
      footerText: 'Switchboard',
      values: [
        {
          title: 'Drinks',
          rows: [
            { title: 'Coffee', description: 'Hot', rowId: 'coffee' },
            { title: 'Tea', description: 'Hot', rowId: 'tea' },
          ],
        },
      ],
    }),
    (i, b, r) => outgoing.list(i, b, r),
  );
  sendRoute(
    'sendLocation',
    'Send a location',
    withExample(LocationBody, { number: '5511999999999', latitude: -23.5505, longitude: -46.6333, name: 'Praça da Sé', address: 'São Paulo' }),
    (i, b, r) => outgoing.location(i, b, r),
  );
  sendRoute(
    'sendContact',
    'Send one or more contact cards (vCards)',
    withExample(ContactBody, { number: '5511999999999', contact: [{ fullName: 'Maria Silva', wuid: '5511988887777', phoneNumber: '+55 11 98888-7777' }] }),
    (i, b, r) => outgoing.contact(i, b, r),
  );
  sendRoute(
    'sendReaction',
    'React to a message with an emoji (an empty reaction removes it)',
    withExample(ReactionBody, { key: { remoteJid: '5511999999999@s.whatsapp.net', fromMe: true, id: '3EB0C431C26A1916E07A' }, reaction: '👍' }),
    (i, b, r) => outgoing.reaction(i, b, r),
  );
  sendRoute(
    'sendButtons',
    'Send a message with buttons (reply, copy, url, call or PIX)',
    withExample(ButtonsBody, {
      number: '5511999999999',
      title: 'Order 42',
      description: 'Confirm?',
      footer: 'Switchboard',
      buttons: [{ type: 'reply', displayText: 'Yes', id: 'yes' }],
    }),
    (i, b, r) => outgoing.buttons(i, b, r),
  );
  sendRoute(
    'sendStatus',
    'Post a status (story)',
    withExample(StatusBody, { type: 'text', content: 'Open today', backgroundColor: '#198754', font: 1, statusJidList: ['5511999999999'] }),
    (i, b, r) => outgoing.status(i, b, r),
  );
  sendRoute(
    'sendTemplate',
    'Send an approved Meta message template (WHATSAPP-BUSINESS)',
    withExample(TemplateSendBody, {
      number: '5511999999999',
      name: 'order_update',
      language: 'en_US',
      components: [
        {
          type: 'body',
          parameters: [
            { type: 'text', text: 'Maria' },
            { type: 'text', text: '42' },
          ],
        },
      ],
    }),
    (i, b, r) => outgoing.template(i, b, r),
  );
  await sendRoute(
    'sendWhatsAppAudio',
    'Send a voice note (converted to OGG/Opus, with its length and waveform)',
    withExample(WhatsAppAudioBody, { number: '5511999999999', audio: 'https://example.com/voice-note.mp3' }),
    (i, b, r) => outgoing.voiceNote(i, b, r),
    'audio',
  );
  await sendRoute(
    'sendPtv',
    'Send a round video note (PTV)',
    withExample(PtvBody, { number: '5511999999999', video: 'https://example.com/round-video.mp4' }),
    (i, b, r) => outgoing.ptv(i, b, r),
    'video',
  );
};
