// The send use cases: each API send turned into the message content to queue (quotes, media, lists, statuses, places,
// contact cards, reactions).
import type { Connector } from '../core/connector.js';
import type { ConnectorKinds, MessageOperation, Operation } from '../core/connector-kind.js';
import { invalidInput } from '../core/errors.js';
import type { Instance } from '../core/instance.js';
import type { ProxySettings } from '../core/proxy.js';
import type { Db } from '../platform/store/types.js';
import { loadMedia } from '../media/load.js';
import { prepareMedia, type MediaKind, type PreparedMedia } from '../media/prepare.js';
import type { Ffmpeg } from '../media/ffmpeg.js';
import { prepareRoundVideo } from '../media/round-video.js';
import { prepareVoiceNote } from '../media/voice-note.js';
import type { ButtonsSend } from './buttons-schema.js';
import { buttonsContent, checkButtons, imageHeader } from './buttons.js';
import { chatPartnersOf } from './chat-partners.js';
import {
  buildContextInfo,
  contactContent,
  listContent,
  locationContent,
  mediaContent,
  pollContent,
  reactionContent,
  statusTextContent,
  templateContent,
  textContent,
  type ContextInput,
} from './compose.js';
import { ptvContent, voiceNoteContent } from './compose-voice.js';
import { asParticipant, mentionsOf, setMentions } from './group-mentions.js';
import { recipientJid, statusBroadcastJid, statusViewerJid } from './jid.js';
import { findMessageByKey } from './records.js';
import type { BuiltMessage, SendService } from './send-service.js';
import {
  maxTextLength,
  type ContactSend,
  type ListSend,
  type LocationSend,
  type MediaSend,
  type PollSend,
  type PtvSend,
  type ReactionSend,
  type StatusSend,
  type StickerSend,
  type TextSend,
  type WhatsAppAudioSend,
} from './send-schemas.js';
import type { TemplateSend } from './template-schemas.js';

/** What makes a send request itself, beside its body: the route (for idempotency) and the Idempotency-Key. */
export interface SendRequest {
  route: string;
  /** The body as received: two requests with one key are "the same" when route and body are. */
  body: unknown;
  idempotencyKey?: string;
}

export interface OutgoingDeps {
  db: Db;
  sends: SendService;
  /** The instance's connector (created when it has none yet). */
  connectorOf(instance: Instance): Connector;
  kinds: Pick<ConnectorKinds, 'assertCan' | 'listsAreInteractive'>;
  media: { maxBytes: number; denyPrivate: boolean; fetchTimeoutMs: number };
  /** Converts voice notes and measures round videos (a child process, bounded). */
  ffmpeg: Ffmpeg;
  /** The instance's proxy in effect (media URLs are downloaded through it); absent: none. */
  proxyOf?(instance: Instance): Promise<ProxySettings | null>;
}

type Common = { number: string; delay?: number; mentionsEveryOne?: boolean } & ContextInput;

export class OutgoingMessages {
  constructor(private readonly deps: OutgoingDeps) {}

  text(instance: Instance, body: TextSend, request: SendRequest) {
    return this.send(instance, 'text', body, request, async () => {
      const remoteJid = recipientJid(body.number);
      const { messageType, content } = textContent(body.text, await this.contextOf(instance, body));
      return { remoteJid, messageType, content };
    });
  }

  media(instance: Instance, body: MediaSend, request: SendRequest) {
    return this.send(instance, 'media', body, request, async () => {
      const remoteJid = recipientJid(body.number);
      const contextInfo = await this.contextOf(instance, body);
      const media = await this.loadAndPrepare(instance, body.media, body.mediatype as MediaKind, 'media', body.fileName, body.mimetype);
      const { uploaded, mediaBlob } = await this.uploadFor(instance, media);
      return { remoteJid, mediaBlob, ...mediaContent(media, uploaded, { caption: body.caption, contextInfo }) };
    });
  }

  sticker(instance: Instance, body: StickerSend, request: SendRequest) {
    return this.send(instance, 'sticker', body, request, async () => {
      const remoteJid = recipientJid(body.number);
      const contextInfo = await this.contextOf(instance, body);
      const media = await this.loadAndPrepare(instance, body.sticker, 'sticker', 'sticker');
      const { uploaded, mediaBlob } = await this.uploadFor(instance, media);
      return { remoteJid, mediaBlob, ...mediaContent(media, uploaded, { contextInfo }) };
    });
  }

  /**
   * A voice note: the audio converted to OGG/Opus (unless `encoding: false`) and measured when the send is accepted, so
   * audio that cannot be read is a 400; unlike upstream, `quoted` and mentions apply as to any send.
   */
  voiceNote(instance: Instance, body: WhatsAppAudioSend, request: SendRequest) {
    return this.send(instance, 'voiceNote', body, request, async () => {
      const remoteJid = recipientJid(body.number);
      const contextInfo = await this.contextOf(instance, body);
      const loaded = await this.load(instance, body.audio, 'audio');
      const voice = await prepareVoiceNote(this.deps.ffmpeg, loaded.bytes, {
        field: 'audio',
        convert: body.encoding !== false,
        maxBytes: this.deps.media.maxBytes,
      });
      const media = await prepareMedia(voice.bytes, 'audio', { field: 'audio' });
      const { uploaded, mediaBlob } = await this.uploadFor(instance, media);
      return { remoteJid, mediaBlob, ...voiceNoteContent(media, uploaded, voice, contextInfo) };
    });
  }

  /** A round video note: MP4 (other videos converted), its length measured; URLs work (upstream's probe read them as file paths). */
  ptv(instance: Instance, body: PtvSend, request: SendRequest) {
    return this.send(instance, 'ptv', body, request, async () => {
      const remoteJid = recipientJid(body.number);
      const contextInfo = await this.contextOf(instance, body);
      const loaded = await this.load(instance, body.video, 'video');
      const video = await prepareRoundVideo(this.deps.ffmpeg, loaded.bytes, { field: 'video', maxBytes: this.deps.media.maxBytes });
      const media = await prepareMedia(video.bytes, 'video', { field: 'video' });
      const { uploaded, mediaBlob } = await this.uploadFor(instance, media);
      return { remoteJid, mediaBlob, ...ptvContent(media, uploaded, video.seconds, contextInfo) };
    });
  }

  poll(instance: Instance, body: PollSend, request: SendRequest) {
    return this.send(instance, 'poll', body, request, async () => {
      const remoteJid = recipientJid(body.number);
      return { remoteJid, ...pollContent(body.name, body.values, body.selectableCount, undefined, await this.contextOf(instance, body)) };
    });
  }

  location(instance: Instance, body: LocationSend, request: SendRequest) {
    return this.send(instance, 'location', body, request, async () => {
      const remoteJid = recipientJid(body.number);
      return { remoteJid, ...locationContent(body, await this.contextOf(instance, body)) };
    });
  }

  /** One or more contact cards (vCards); unlike upstream, `delay`, `quoted` and mentions apply as to any send. */
  contact(instance: Instance, body: ContactSend, request: SendRequest) {
    return this.send(instance, 'contact', body, request, async () => {
      const remoteJid = recipientJid(body.number);
      return { remoteJid, ...contactContent(body.contact, await this.contextOf(instance, body)) };
    });
  }

  /** A reaction to the message `key` names, sent to that message's chat; no typing, no quote (as upstream). */
  reaction(instance: Instance, body: ReactionSend, request: SendRequest) {
    return this.send(instance, 'reaction', {}, request, async () => {
      const remoteJid = recipientJid(body.key.remoteJid, 'key.remoteJid');
      const participant = body.key.participant === undefined ? undefined : recipientJid(body.key.participant, 'key.participant');
      return { remoteJid, ...reactionContent({ ...body.key, remoteJid, participant }, body.reaction) };
    });
  }

  /**
   * Buttons as a view-once interactive message (Evolution's rules as 400s, then the fields each button needs); an image
   * header from `thumbnailUrl`. Unlike upstream, quotes and mentions go out with it.
   */
  buttons(instance: Instance, body: ButtonsSend, request: SendRequest) {
    return this.send(instance, 'buttons', body, request, async () => {
      checkButtons(body);
      const remoteJid = recipientJid(body.number);
      const contextInfo = await this.contextOf(instance, body);
      let header: Record<string, unknown> | undefined;
      let mediaBlob: Buffer | undefined;
      if (body.thumbnailUrl !== undefined && body.buttons.every((button) => button.type !== 'pix')) {
        const media = await this.loadAndPrepare(instance, body.thumbnailUrl, 'image', 'thumbnailUrl');
        const uploaded = await this.uploadFor(instance, media);
        mediaBlob = uploaded.mediaBlob;
        header = imageHeader(mediaContent(media, uploaded.uploaded, {}).content.imageMessage as Record<string, unknown>);
      }
      return { remoteJid, mediaBlob, ...buttonsContent(body, { header, contextInfo }) };
    });
  }

  /** A list: a real interactive list where the kind has them, else a single-choice poll (which every phone shows). */
  list(instance: Instance, body: ListSend, request: SendRequest) {
    return this.send(instance, 'list', body, request, async () => {
      const sections = body.values ?? body.sections;
      if (!sections) throw invalidInput('values is required: an array of sections, each with rows');
      const remoteJid = recipientJid(body.number);
      if (this.deps.kinds.listsAreInteractive(instance)) return { remoteJid, ...listContent(body, sections) };
      const field = body.values ? 'values' : 'sections';
      const options = sections.flatMap((section) => section.rows.map((row) => row.title));
      // Options named by where they were given (values[1].rows[0].title), not by their place in the flattened poll.
      const names = sections.flatMap((section, s) => section.rows.map((_, r) => `${field}[${s}].rows[${r}].title`));
      const fields = { name: 'title', options: field, option: (i: number) => names[i] };
      return { remoteJid, ...pollContent(body.title, options, 1, fields, await this.contextOf(instance, body)) };
    });
  }

  /** A Meta message template (WHATSAPP-BUSINESS), queued and stored like any send; its components go to Meta as given. */
  template(instance: Instance, body: TemplateSend, request: SendRequest) {
    return this.send(instance, 'templates', body, request, async () => {
      const remoteJid = recipientJid(body.number);
      return { remoteJid, ...templateContent(body, await this.contextOf(instance, body)) };
    });
  }

  status(instance: Instance, body: StatusSend, request: SendRequest) {
    return this.send(instance, 'status', {}, request, async () => {
      const statusJidList = await this.statusAudience(instance, body);
      const base = { remoteJid: statusBroadcastJid, statusJidList, participant: instance.ownerJid ?? '' };
      if (body.type === 'text') {
        if (body.content.length > maxTextLength) throw invalidInput(`content must be at most ${maxTextLength} characters for a text status`);
        if (!body.backgroundColor) throw invalidInput('backgroundColor is required for a text status (e.g. #008000)');
        if (body.font === undefined) throw invalidInput('font is required for a text status (0 to 5)');
        return { ...base, ...statusTextContent(body.content, body.backgroundColor, body.font) };
      }
      const media = await this.loadAndPrepare(instance, body.content, body.type as MediaKind, 'content');
      const { uploaded, mediaBlob } = await this.uploadFor(instance, media);
      return { ...base, mediaBlob, ...mediaContent(media, uploaded, { caption: body.caption }) };
    });
  }

  /** Who may see a status: everyone the instance has written with (allContacts), or the list given. */
  private async statusAudience(instance: Instance, body: StatusSend): Promise<string[]> {
    if (body.allContacts) {
      const partners = await chatPartnersOf(this.deps.db, instance.id);
      if (partners.length === 0) throw invalidInput('allContacts found no contacts: this instance has exchanged no messages yet; give statusJidList');
      return partners;
    }
    if (!body.statusJidList || body.statusJidList.length === 0) {
      throw invalidInput('statusJidList is required (numbers or addresses who may see the status) unless allContacts is true');
    }
    return body.statusJidList.map((n, i) => statusViewerJid(n, `statusJidList[${i}]`));
  }

  private async send(
    instance: Instance,
    operation: MessageOperation | Extract<Operation, 'templates'>,
    common: Partial<Common>,
    request: SendRequest,
    build: () => Promise<BuiltMessage>,
  ) {
    this.deps.kinds.assertCan(instance, operation);
    const connector = this.deps.connectorOf(instance);
    return this.deps.sends.submit(
      instance,
      {
        route: request.route,
        body: request.body,
        idempotencyKey: request.idempotencyKey,
        delay: common.delay,
        mentionsEveryOne: common.mentionsEveryOne,
        awaitFirstAttempt: awaitsFirstAttempt(connector, common.delay),
      },
      async () => {
        const built = await inGroup(instance, connector, await build(), common);
        // What the instance's messenger could never take is refused now, before anything is stored or announced.
        await connector.messaging.check?.(built);
        const alternate = connector.contacts?.alternateAddress?.(built.remoteJid);
        return alternate ? { ...built, remoteJidAlt: alternate } : built;
      },
    );
  }

  private contextOf(instance: Instance, body: ContextInput) {
    return buildContextInfo(body, instance.ownerJid, async (keyId) => {
      const found = await findMessageByKey(this.deps.db, instance.id, keyId);
      return found && { content: found.content, remoteJid: found.remoteJid, fromMe: found.fromMe, participant: found.participant };
    });
  }

  /** Uploads now where the connector can; otherwise the plaintext is kept for the connector to upload at send time. */
  private async uploadFor(instance: Instance, media: PreparedMedia) {
    const { messaging } = this.deps.connectorOf(instance);
    const uploaded = messaging.uploadMedia ? await messaging.uploadMedia(media.encrypted, media.kind) : { url: '', directPath: '' };
    // Not uploaded (a connector that uploads at send time, or one not connected yet): keep the bytes for the send.
    return uploaded.url ? { uploaded } : { uploaded, mediaBlob: media.bytes };
  }

  /** A URL is downloaded through the instance's proxy, when it has one. */
  private async load(instance: Instance, input: string, field: string) {
    const { maxBytes, denyPrivate, fetchTimeoutMs } = this.deps.media;
    const proxy = (await this.deps.proxyOf?.(instance)) ?? null;
    return loadMedia(input, { maxBytes, denyPrivate, timeoutMs: fetchTimeoutMs, field, proxy });
  }

  private async loadAndPrepare(instance: Instance, input: string, kind: MediaKind, field: string, fileName?: string, mimetype?: string) {
    const loaded = await this.load(instance, input, field);
    return prepareMedia(loaded.bytes, kind, {
      fileName: fileName ?? loaded.fileNameHint,
      declaredMimetype: mimetype ?? loaded.declaredMimetype,
      field,
    });
  }
}

/**
 * A message to a group carries its sender as `participant` (filled in when it leaves, if the instance is not linked
 * yet), and its mentions as the group knows its participants: everyone for `mentionsEveryOne`, the people of
 * `mentioned` by the address the group lists them under. Without the group's participants at hand (not linked), the
 * connector resolves `mentionsEveryOne` when the message leaves.
 */
async function inGroup(instance: Instance, connector: Connector, built: BuiltMessage, common: Partial<Common>): Promise<BuiltMessage> {
  if (!built.remoteJid.endsWith('@g.us')) return built;
  const message = { ...built, participant: built.participant ?? instance.ownerJid ?? '' };
  const wantsMentions = common.mentionsEveryOne === true || (common.mentioned?.length ?? 0) > 0;
  if (!wantsMentions || !connector.groups || connector.state() !== 'open') return message;
  const metadata = await connector.groups.metadata(built.remoteJid).catch(() => null);
  if (!metadata) return message;
  if (common.mentionsEveryOne) {
    setMentions(
      message.content,
      metadata.participants.map((p) => p.id),
    );
  } else {
    const named = mentionsOf(message.content);
    if (named)
      setMentions(
        message.content,
        named.map((jid) => asParticipant(jid, metadata.participants)),
      );
  }
  return message;
}

/**
 * Whether the answer waits for the first attempt: only for a connector that knows the outcome at once, open now,
 * and a send without a typing delay. Anything else is answered 201 PENDING at once (the delay, or the connection,
 * would hold the request).
 */
function awaitsFirstAttempt(connector: Connector, delay: number | undefined): boolean {
  return connector.messaging.acknowledgesSynchronously === true && connector.state() === 'open' && !delay;
}
