// Send routes: text, media, sticker, list, poll and status; each answers 201 with the PENDING record at once.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import type { Services } from '../services.js';
import { pathInstance } from '../platform/http/auth.js';
import { invalidInput } from '../core/errors.js';
import { InstanceParams, MessageResult, commonSendFields } from '../platform/http/schemas.js';
import type { Operation } from '../core/connector-kind.js';
import type { Instance } from '../core/instance.js';
import type { Connector } from '../core/connector.js';
import { buildContextInfo, listContent, mediaContent, pollContent, statusTextContent, textContent, type ContextInput } from './compose.js';
import { recipientJid, statusBroadcastJid, statusViewerJid } from './jid.js';
import type { BuiltMessage } from './send-service.js';
import { findMessageByKey } from './records.js';
import { loadMedia } from '../media/load.js';
import { prepareMedia, type MediaKind, type PreparedMedia } from '../media/prepare.js';

/** Longest text, caption or text status taken (WhatsApp clients stop at 65,536 characters). */
const maxTextLength = 65536;
const TextBody = Type.Object({ ...commonSendFields, text: Type.String({ minLength: 1, maxLength: maxTextLength }) });

const MediaBody = Type.Object({
  ...commonSendFields,
  mediatype: Type.Enum(['image', 'video', 'audio', 'document']),
  mimetype: Type.Optional(Type.String()),
  caption: Type.Optional(Type.String({ maxLength: maxTextLength })),
  media: Type.String({ minLength: 1, description: 'http(s) URL, base64 or data URL' }),
  fileName: Type.Optional(Type.String({ maxLength: 255 })),
});

const StickerBody = Type.Object({ ...commonSendFields, sticker: Type.String({ minLength: 1, description: 'http(s) URL, base64 or data URL of an image' }) });

const Row = Type.Object({ title: Type.String({ minLength: 1 }), description: Type.Optional(Type.String()), rowId: Type.Optional(Type.String()) });
const Section = Type.Object({ title: Type.Optional(Type.String()), rows: Type.Array(Row, { minItems: 1 }) });
const ListBody = Type.Object({
  ...commonSendFields,
  title: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  buttonText: Type.Optional(Type.String()),
  footerText: Type.Optional(Type.String()),
  values: Type.Optional(Type.Array(Section, { minItems: 1 })),
  sections: Type.Optional(Type.Array(Section, { minItems: 1 })),
});

const PollBody = Type.Object({
  ...commonSendFields,
  name: Type.String({ minLength: 1 }),
  selectableCount: Type.Integer({ minimum: 0 }),
  values: Type.Array(Type.String(), { minItems: 2 }),
});

const StatusBody = Type.Object({
  type: Type.Enum(['text', 'image', 'video', 'audio']),
  content: Type.String({ minLength: 1, description: 'The text of a text status (at most 65,536 characters), else the media (URL, base64 or data URL)' }),
  caption: Type.Optional(Type.String({ maxLength: maxTextLength })),
  backgroundColor: Type.Optional(Type.String()),
  font: Type.Optional(Type.Integer({ minimum: 0, maximum: 5 })),
  allContacts: Type.Optional(Type.Boolean()),
  statusJidList: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
});

type Common = { number: string; delay?: number; mentionsEveryOne?: boolean } & ContextInput;

export const messageRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { config, sends, lifecycle: runtime, store } = services;

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

  const contextOf = (instance: Instance, body: ContextInput) =>
    buildContextInfo(body, instance.ownerJid, async (keyId) => {
      const found = await findMessageByKey(store.db, instance.id, keyId);
      return found && { content: found.content, remoteJid: found.remoteJid, fromMe: found.fromMe, participant: found.participant };
    });

  /** Uploads now where the connector can; otherwise the plaintext is kept for the connector to upload at send time. */
  const uploadFor = async (instance: Instance, media: PreparedMedia) => {
    const connector = runtime.attach(instance);
    const uploaded = connector.messaging.uploadMedia ? await connector.messaging.uploadMedia(media.encrypted, media.kind) : { url: '', directPath: '' };
    // Not uploaded (a connector that uploads at send time, or one not connected yet): keep the bytes for the send.
    return uploaded.url ? { uploaded } : { uploaded, mediaBlob: media.bytes };
  };

  const loadAndPrepare = async (input: string, kind: MediaKind, field: string, fileName?: string, mimetype?: string) => {
    const loaded = await loadMedia(input, {
      maxBytes: config.mediaMaxBytes,
      denyPrivate: config.outboundDenyPrivate,
      timeoutMs: config.mediaFetchTimeoutMs,
      field,
    });
    return prepareMedia(loaded.bytes, kind, {
      fileName: fileName ?? loaded.fileNameHint,
      declaredMimetype: mimetype ?? loaded.declaredMimetype,
      field,
    });
  };

  /**
   * Whether the answer waits for the first attempt: only for a connector that knows the outcome at once, open now,
   * and a send without a typing delay. Anything else is answered 201 PENDING at once (the delay, or the connection,
   * would hold the request).
   */
  const awaitsFirstAttempt = (connector: Connector, delay: number | undefined) =>
    connector.messaging.acknowledgesSynchronously === true && connector.state() === 'open' && !delay;

  async function send(
    request: FastifyRequest,
    reply: FastifyReply,
    operation: Operation,
    common: Partial<Common>,
    build: (instance: Instance) => Promise<BuiltMessage>,
  ) {
    const instance = pathInstance(request);
    services.kinds.assertCan(instance, operation);
    const header = request.headers['idempotency-key'];
    const idempotencyKey = Array.isArray(header) ? header[0] : header;
    const connector = runtime.attach(instance);
    const result = await sends.submit(
      instance,
      {
        route: request.routeOptions.url ?? '',
        body: request.body,
        idempotencyKey,
        delay: common.delay,
        mentionsEveryOne: common.mentionsEveryOne,
        awaitFirstAttempt: awaitsFirstAttempt(connector, common.delay),
      },
      async () => {
        const built = await build(instance);
        // What the instance's messenger could never take is refused now, before anything is stored or announced.
        connector.messaging.check?.(built);
        return built;
      },
    );
    if (result.replayed) reply.header('Idempotent-Replayed', 'true');
    return reply.status(201).send(result.message);
  }

  app.post('/message/sendText/:instance', route('Send a text message', TextBody), async (request, reply) => {
    const body = request.body;
    return send(request, reply, 'text', body, async (instance) => {
      const remoteJid = recipientJid(body.number);
      const { messageType, content } = textContent(body.text, await contextOf(instance, body));
      return { remoteJid, messageType, content };
    });
  });

  app.post('/message/sendMedia/:instance', route('Send an image, video, audio file or document', MediaBody), async (request, reply) => {
    const body = request.body;
    return send(request, reply, 'media', body, async (instance) => {
      const remoteJid = recipientJid(body.number);
      const contextInfo = await contextOf(instance, body);
      const media = await loadAndPrepare(body.media, body.mediatype as MediaKind, 'media', body.fileName, body.mimetype);
      const { uploaded, mediaBlob } = await uploadFor(instance, media);
      return { remoteJid, mediaBlob, ...mediaContent(media, uploaded, { caption: body.caption, contextInfo }) };
    });
  });

  app.post('/message/sendSticker/:instance', route('Send a sticker (converted to WebP)', StickerBody), async (request, reply) => {
    const body = request.body;
    return send(request, reply, 'sticker', body, async (instance) => {
      const remoteJid = recipientJid(body.number);
      const contextInfo = await contextOf(instance, body);
      const media = await loadAndPrepare(body.sticker, 'sticker', 'sticker');
      const { uploaded, mediaBlob } = await uploadFor(instance, media);
      return { remoteJid, mediaBlob, ...mediaContent(media, uploaded, { contextInfo }) };
    });
  });

  app.post('/message/sendPoll/:instance', route('Send a poll', PollBody), async (request, reply) => {
    const body = request.body;
    return send(request, reply, 'poll', body, async (instance) => {
      const remoteJid = recipientJid(body.number);
      return { remoteJid, ...pollContent(body.name, body.values, body.selectableCount, undefined, await contextOf(instance, body)) };
    });
  });

  app.post(
    '/message/sendList/:instance',
    route('Send a list (delivered as a single-choice poll, which every phone shows)', ListBody),
    async (request, reply) => {
      const body = request.body;
      return send(request, reply, 'list', body, async (instance) => {
        const sections = body.values ?? body.sections;
        if (!sections) throw invalidInput('values is required: an array of sections, each with rows');
        const remoteJid = recipientJid(body.number);
        // The Cloud API has real interactive lists; phones on WhatsApp Web links show polls reliably.
        if (services.kinds.listsAreInteractive(instance)) return { remoteJid, ...listContent(body, sections) };
        const field = body.values ? 'values' : 'sections';
        const options = sections.flatMap((section) => section.rows.map((row) => row.title));
        // Options named by where they were given (values[1].rows[0].title), not by their place in the flattened poll.
        const names = sections.flatMap((section, s) => section.rows.map((_, r) => `${field}[${s}].rows[${r}].title`));
        const fields = { name: 'title', options: field, option: (i: number) => names[i] };
        return { remoteJid, ...pollContent(body.title, options, 1, fields, await contextOf(instance, body)) };
      });
    },
  );

  app.post('/message/sendStatus/:instance', route('Post a status (story)', StatusBody), async (request, reply) => {
    const body = request.body;
    return send(request, reply, 'status', {}, async (instance) => {
      let statusJidList: string[];
      if (body.allContacts) {
        const rows = await store.db
          .selectFrom('messages')
          .select('remote_jid')
          .distinct()
          .where('instance_id', '=', instance.id)
          .where('remote_jid', 'like', '%@s.whatsapp.net')
          .execute();
        statusJidList = rows.map((r) => r.remote_jid);
        if (statusJidList.length === 0) throw invalidInput('allContacts found no contacts: this instance has exchanged no messages yet; give statusJidList');
      } else {
        if (!body.statusJidList || body.statusJidList.length === 0) {
          throw invalidInput('statusJidList is required (numbers or addresses who may see the status) unless allContacts is true');
        }
        statusJidList = body.statusJidList.map((n, i) => statusViewerJid(n, `statusJidList[${i}]`));
      }
      const base = { remoteJid: statusBroadcastJid, statusJidList, participant: instance.ownerJid ?? '' };
      if (body.type === 'text') {
        if (body.content.length > maxTextLength) throw invalidInput(`content must be at most ${maxTextLength} characters for a text status`);
        if (!body.backgroundColor) throw invalidInput('backgroundColor is required for a text status (e.g. #008000)');
        if (body.font === undefined) throw invalidInput('font is required for a text status (0 to 5)');
        return { ...base, ...statusTextContent(body.content, body.backgroundColor, body.font) };
      }
      const media = await loadAndPrepare(body.content, body.type as MediaKind, 'content');
      const { uploaded, mediaBlob } = await uploadFor(instance, media);
      return { ...base, mediaBlob, ...mediaContent(media, uploaded, { caption: body.caption }) };
    });
  });
};
