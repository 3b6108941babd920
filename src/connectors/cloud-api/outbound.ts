// Stored WhatsApp message content to Cloud API message objects: what can be sent as is, what needs an upload first.
import { ProviderError } from '../../core/connector.js';
import { interactiveButtons } from './interactive-buttons.js';
import { interactiveList } from './interactive-list.js';

type GraphMediaType = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/** What a stored message becomes on the Graph API. */
export type OutboundPlan =
  /** A message object part ready to send: `{type, [type]: body}` (an array for `contacts`). */
  | { kind: 'ready'; type: string; body: Record<string, unknown> | Record<string, unknown>[] }
  /** Media: upload the bytes to /media, then send `{type, [type]: {id, …extra}}`. */
  | { kind: 'media'; type: GraphMediaType; mimetype: string; fileName: string; extra: Record<string, unknown> }
  /** A reaction to a message we know by its key id (mapped to Meta's id at send time). */
  | { kind: 'reaction'; targetKeyId: string; emoji: string };

const unavailable = (what: string) =>
  new ProviderError('refused', [`Method not available on WhatsApp Business API (integration WHATSAPP-BUSINESS cannot ${what})`]);

const mediaKinds: Record<string, GraphMediaType> = {
  imageMessage: 'image',
  videoMessage: 'video',
  audioMessage: 'audio',
  documentMessage: 'document',
  stickerMessage: 'sticker',
};

const fallbackMimetypes: Record<GraphMediaType, string> = {
  image: 'image/jpeg',
  video: 'video/mp4',
  audio: 'audio/mpeg',
  document: 'application/octet-stream',
  sticker: 'image/webp',
};

/** Content kinds the Cloud API has no equivalent for, with the words the refusal uses. */
const unsupportedKinds: Record<string, string> = {
  pollCreationMessage: 'send polls',
  pollCreationMessageV2: 'send polls',
  pollCreationMessageV3: 'send polls',
  buttonsMessage: 'send button messages',
};

const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** The Cloud API `to` of a chat address: the digits of a user address; groups, statuses and others are refused. */
export function recipientOf(remoteJid: string): string {
  if (remoteJid === 'status@broadcast') throw unavailable('post statuses');
  if (remoteJid.endsWith('@g.us')) throw unavailable('send to group chats');
  const match = /^(\d{5,24})@s\.whatsapp\.net$/.exec(remoteJid);
  if (!match) throw unavailable(`send to ${remoteJid} (the Cloud API addresses people by phone number)`);
  return match[1];
}

/** The key id of the message a send replies to (`contextInfo.stanzaId`), if any. */
export function quotedKeyIdOf(content: Record<string, unknown>): string | undefined {
  for (const value of Object.values(content)) {
    const stanzaId = record(record(value).contextInfo).stanzaId;
    if (typeof stanzaId === 'string' && stanzaId !== '') return stanzaId;
  }
  return undefined;
}

export function planOutbound(content: Record<string, unknown>): OutboundPlan {
  if (typeof content.conversation === 'string') return textPlan(content.conversation);
  const kind = Object.keys(content).find((key) => key !== 'messageContextInfo');
  if (!kind) throw new ProviderError('refused', ['the message has no content to send']);
  const part = record(content[kind]);
  if (kind === 'extendedTextMessage') return textPlan(str(part.text));
  const mediaType = mediaKinds[kind];
  if (mediaType) return mediaPlan(mediaType, part);
  if (kind === 'listMessage') return { kind: 'ready', type: 'interactive', body: interactiveList(part) };
  if (kind === 'viewOnceMessage') return { kind: 'ready', type: 'interactive', body: interactiveButtons(part) };
  if (kind === 'locationMessage') {
    return {
      kind: 'ready',
      type: 'location',
      body: {
        latitude: part.degreesLatitude,
        longitude: part.degreesLongitude,
        ...(str(part.name) ? { name: str(part.name) } : {}),
        ...(str(part.address) ? { address: str(part.address) } : {}),
      },
    };
  }
  if (kind === 'contactMessage') return { kind: 'ready', type: 'contacts', body: [graphContact(part)] };
  if (kind === 'contactsArrayMessage') {
    const cards = Array.isArray(part.contacts) ? part.contacts.map((card) => graphContact(record(card))) : [];
    if (cards.length === 0) throw new ProviderError('refused', ['the contact message has no contact cards']);
    return { kind: 'ready', type: 'contacts', body: cards };
  }
  if (kind === 'templateMessage') {
    // Meta's own template object (name, language, components), as sendTemplate stored it.
    if (!str(part.name) || !str(record(part.language).code)) throw new ProviderError('refused', ['the template message names no template or language']);
    const { contextInfo: _quote, ...template } = part;
    return { kind: 'ready', type: 'template', body: template };
  }
  if (kind === 'reactionMessage') {
    const targetKeyId = str(record(part.key).id);
    if (!targetKeyId) throw new ProviderError('refused', ['the reaction names no message to react to']);
    return { kind: 'reaction', targetKeyId, emoji: str(part.text) };
  }
  throw unavailable(unsupportedKinds[kind] ?? `send ${kind}`);
}

/** A contact card (`{displayName, vcard}`) as a Graph contact: name, phones (with `wa_id`), emails, urls, org. */
function graphContact(card: Record<string, unknown>): Record<string, unknown> {
  const lines = str(card.vcard).split(/\r?\n/);
  const values = (property: string) =>
    lines.flatMap((line) => {
      const colon = line.indexOf(':');
      if (colon === -1) return [];
      const [name, ...params] = line.slice(0, colon).split(';');
      // `item1.TEL` is a TEL in a group: the group prefix is not part of the name.
      return name.replace(/^[^.]*\./, '').toUpperCase() === property ? [{ params, value: line.slice(colon + 1) }] : [];
    });
  const formatted = values('FN')[0]?.value || str(card.displayName) || 'Contact';
  const phones = values('TEL').map(({ params, value }) => {
    const waid = params.find((p) => p.toLowerCase().startsWith('waid='))?.slice(5);
    return { phone: value, ...(waid ? { wa_id: waid } : {}) };
  });
  const emails = values('EMAIL').map(({ value }) => ({ email: value }));
  const urls = values('URL').map(({ value }) => ({ url: value }));
  const company = values('ORG')[0]?.value.replace(/;+$/, '');
  return {
    name: { formatted_name: formatted, first_name: formatted },
    ...(phones.length > 0 ? { phones } : {}),
    ...(emails.length > 0 ? { emails } : {}),
    ...(urls.length > 0 ? { urls } : {}),
    ...(company ? { org: { company } } : {}),
  };
}

function textPlan(text: string): OutboundPlan {
  if (text.trim() === '') throw new ProviderError('refused', ['text must not be empty']);
  // Like WhatsApp clients, a link in the text gets its preview.
  return { kind: 'ready', type: 'text', body: { preview_url: /https?:\/\/\S/.test(text), body: text } };
}

function mediaPlan(type: GraphMediaType, part: Record<string, unknown>): OutboundPlan {
  // Graph takes plain types (a voice note's `audio/ogg; codecs=opus` is its `audio/ogg`, which Meta reserves for Opus).
  const mimetype = str(part.mimetype).split(';')[0].trim() || fallbackMimetypes[type];
  const caption = str(part.caption);
  const fileName = str(part.fileName).trim();
  const extra: Record<string, unknown> = {};
  // Audio and stickers carry no caption on the Cloud API; documents carry their file name.
  if (caption && type !== 'audio' && type !== 'sticker') extra.caption = caption;
  if (type === 'document') extra.filename = fileName || 'file';
  // A voice note (OGG/Opus) shows as one: voice icon, waveform, transcription.
  if (type === 'audio' && part.ptt === true) extra.voice = true;
  return { kind: 'media', type, mimetype, fileName: fileName || type, extra };
}

/** The `{type, [type]: {...}}` part of a media message once its bytes are uploaded. */
export function mediaPart(plan: Extract<OutboundPlan, { kind: 'media' }>, mediaId: string): { type: string; body: Record<string, unknown> } {
  return { type: plan.type, body: { id: mediaId, ...plan.extra } };
}
