// Builds WhatsApp message content for each send kind (text, media, sticker, poll, list-as-poll, status, location, contact, reaction).
import { randomBytes } from 'node:crypto';
import { invalidInput } from '../core/errors.js';
import type { PreparedMedia } from '../media/types.js';
import { toJid } from './jid.js';

export interface ContextInput {
  mentioned?: string[];
  quoted?: { key: { id: string; remoteJid?: string; fromMe?: boolean; participant?: string }; message?: { conversation?: string } };
}

/** The quoted message's content when it must be looked up from the store. */
export type QuotedLookup = (
  keyId: string,
) => Promise<{ content: Record<string, unknown>; remoteJid: string; fromMe: boolean; participant: string | null } | undefined>;

export async function buildContextInfo(input: ContextInput, ownerJid: string | null, lookup: QuotedLookup) {
  const contextInfo: Record<string, unknown> = {};
  if (input.mentioned && input.mentioned.length > 0) {
    contextInfo.mentionedJid = input.mentioned.map((m, i) => toJid(m, `mentioned[${i}]`));
  }
  if (input.quoted) {
    const { key, message } = input.quoted;
    let quotedMessage: Record<string, unknown> | undefined = message?.conversation !== undefined ? { conversation: message.conversation } : undefined;
    let participant = key.participant ?? (key.fromMe ? ownerJid : key.remoteJid) ?? undefined;
    if (!quotedMessage) {
      const found = await lookup(key.id);
      if (found) {
        quotedMessage = withoutQuote(found.content);
        participant = found.fromMe ? (ownerJid ?? undefined) : (found.participant ?? found.remoteJid);
      }
    }
    // Like WhatsApp clients, a quote whose message is unknown is left out rather than refusing the send.
    if (quotedMessage) {
      contextInfo.stanzaId = key.id;
      if (participant) contextInfo.participant = participant;
      contextInfo.quotedMessage = quotedMessage;
    }
  }
  return Object.keys(contextInfo).length > 0 ? contextInfo : undefined;
}

/**
 * A stored message as a quote: its own quote left out (as WhatsApp clients and Baileys do), so quoting a reply does
 * not carry the whole conversation along and a chain of quotes stays the size of one message.
 */
function withoutQuote(content: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [type, value] of Object.entries(content)) {
    if (value && typeof value === 'object' && !Array.isArray(value) && 'contextInfo' in value) {
      const { contextInfo, ...rest } = value as Record<string, unknown>;
      const kept = contextInfo && typeof contextInfo === 'object' ? { ...(contextInfo as Record<string, unknown>) } : undefined;
      if (kept) for (const key of ['quotedMessage', 'stanzaId', 'participant', 'remoteJid']) delete kept[key];
      out[type] = kept && Object.keys(kept).length > 0 ? { ...rest, contextInfo: kept } : rest;
    } else {
      out[type] = value;
    }
  }
  return out;
}

export function textContent(text: string, contextInfo: Record<string, unknown> | undefined) {
  if (!contextInfo) return { messageType: 'conversation', content: { conversation: text } };
  return { messageType: 'extendedTextMessage', content: { extendedTextMessage: { text, contextInfo } } };
}

const mediaKeys: Record<PreparedMedia['kind'], string> = {
  image: 'imageMessage',
  video: 'videoMessage',
  audio: 'audioMessage',
  document: 'documentMessage',
  sticker: 'stickerMessage',
};

export function mediaContent(
  media: PreparedMedia,
  uploaded: { url: string; directPath: string },
  extra: { caption?: string; contextInfo?: Record<string, unknown> },
) {
  const messageType = mediaKeys[media.kind];
  const body: Record<string, unknown> = {
    url: uploaded.url,
    mimetype: media.mimetype,
    fileSha256: media.fileSha256,
    fileLength: String(media.fileLength),
    mediaKey: media.mediaKey,
    fileEncSha256: media.fileEncSha256,
    directPath: uploaded.directPath,
    mediaKeyTimestamp: media.mediaKeyTimestamp,
  };
  if (media.kind !== 'sticker' && media.kind !== 'audio') body.caption = extra.caption ?? '';
  if (media.width !== undefined) body.width = media.width;
  if (media.height !== undefined) body.height = media.height;
  if (media.jpegThumbnail !== undefined) body.jpegThumbnail = media.jpegThumbnail;
  if (media.kind === 'document') {
    body.fileName = media.fileName ?? 'file';
    body.title = media.fileName ?? 'file';
  }
  if (media.kind === 'sticker') body.isAnimated = media.isAnimated ?? false;
  if (media.kind === 'video') body.gifPlayback = false;
  if (media.kind === 'audio') body.ptt = false;
  body.contextInfo = extra.contextInfo ?? {};
  return { messageType, content: { [messageType]: body } };
}

// WhatsApp's limits for polls: 12 options, option names up to 100 characters, question up to 255.
const pollLimits = { maxOptions: 12, maxOptionLength: 100, maxNameLength: 255 };

/** How a request names the poll's parts in its error messages (sendPoll: name, values[i]; sendList: title, …rows[j].title). */
export interface PollFields {
  name: string;
  options: string;
  option: (index: number) => string;
}

const pollFields: PollFields = { name: 'name', options: 'values', option: (i) => `values[${i}]` };

export function pollContent(name: string, options: string[], selectableCount: number, fields: PollFields = pollFields, contextInfo?: Record<string, unknown>) {
  if (name.trim() === '') throw invalidInput(`${fields.name} must not be empty`);
  if (name.length > pollLimits.maxNameLength) throw invalidInput(`${fields.name} must be at most ${pollLimits.maxNameLength} characters`);
  if (options.length < 2) throw invalidInput(`${fields.options} must have at least 2 options`);
  if (options.length > pollLimits.maxOptions) throw invalidInput(`${fields.options} must have at most ${pollLimits.maxOptions} options (WhatsApp's limit)`);
  options.forEach((option, i) => {
    if (option.trim() === '') throw invalidInput(`${fields.option(i)} must not be empty`);
    if (option.length > pollLimits.maxOptionLength) throw invalidInput(`${fields.option(i)} must be at most ${pollLimits.maxOptionLength} characters`);
  });
  if (new Set(options).size !== options.length) throw invalidInput(`${fields.options} must not contain the same option twice`);
  if (!Number.isInteger(selectableCount) || selectableCount < 0 || selectableCount > options.length) {
    throw invalidInput(`selectableCount must be from 0 (any number of choices) to ${options.length} (the number of options)`);
  }
  return {
    messageType: 'pollCreationMessage',
    content: {
      messageContextInfo: { messageSecret: randomBytes(32).toString('base64') },
      pollCreationMessage: {
        name,
        options: options.map((optionName) => ({ optionName })),
        selectableOptionsCount: selectableCount,
        ...(contextInfo ? { contextInfo } : {}),
      },
    },
  };
}

export interface ListInput {
  title: string;
  description?: string;
  buttonText?: string;
  footerText?: string;
}

/** A native list message (for integrations whose recipients see lists, such as the Cloud API). */
export function listContent(list: ListInput, sections: { title?: string; rows: { title: string; description?: string; rowId?: string }[] }[]) {
  return {
    messageType: 'listMessage',
    content: {
      listMessage: {
        title: list.title,
        description: list.description ?? '',
        buttonText: list.buttonText ?? 'Menu',
        footerText: list.footerText ?? '',
        listType: 'SINGLE_SELECT',
        sections: sections.map((section, s) => ({
          title: section.title ?? '',
          rows: section.rows.map((row, r) => ({ title: row.title, description: row.description ?? '', rowId: row.rowId ?? `${s}.${r}` })),
        })),
      },
    },
  };
}

/** `#RRGGBB` (or `#AARRGGBB`) to WhatsApp's ARGB integer. */
export function argbFromColor(color: string): number {
  const hex = color.trim().replace(/^#/, '');
  if (!/^([0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/.test(hex)) {
    throw invalidInput('backgroundColor must be a colour like #008000 (or #AARRGGBB)');
  }
  const full = hex.length === 6 ? `FF${hex}` : hex;
  return Number.parseInt(full, 16);
}

/**
 * Status fonts by request number (0–5) as the result record names them (`font` is a string there, as Evolution's
 * answers carry WhatsApp's enum name): 0–2 are today's `FontType` names, 3–5 the older names WhatsApp gave them.
 */
const statusFonts = ['SYSTEM', 'SYSTEM_TEXT', 'FB_SCRIPT', 'BRYNDAN_WRITE', 'BEBASNEUE_REGULAR', 'OSWALD_HEAVY'] as const;

/** The wire number of a stored font name (for connectors that speak the protocol). */
export function statusFontNumber(name: string): number | undefined {
  const index = (statusFonts as readonly string[]).indexOf(name);
  return index === -1 ? undefined : index;
}

export function statusTextContent(text: string, backgroundColor: string, font: number) {
  const fontName = statusFonts[font];
  if (fontName === undefined) throw invalidInput(`font must be from 0 to ${statusFonts.length - 1}`);
  return {
    messageType: 'extendedTextMessage',
    content: { extendedTextMessage: { text, backgroundArgb: argbFromColor(backgroundColor), font: fontName } },
  };
}

export function locationContent(
  place: { latitude: number; longitude: number; name: string; address: string },
  contextInfo: Record<string, unknown> | undefined,
) {
  return {
    messageType: 'locationMessage',
    content: {
      locationMessage: {
        degreesLatitude: place.latitude,
        degreesLongitude: place.longitude,
        name: place.name,
        address: place.address,
        ...(contextInfo ? { contextInfo } : {}),
      },
    },
  };
}

export interface ContactCardInput {
  fullName: string;
  phoneNumber: string;
  wuid?: string;
  organization?: string;
  email?: string;
  url?: string;
}

/**
 * A contact's vCard as WhatsApp clients write it (Evolution's layout). `waid` is the bare WhatsApp number: the
 * digits of `wuid`, else of `phoneNumber` (upstream puts a full address there when `wuid` is absent).
 */
function contactVcard(contact: ContactCardInput, field: string): string {
  for (const name of ['fullName', 'phoneNumber', 'wuid', 'organization', 'email', 'url'] as const) {
    const value = contact[name];
    if (value !== undefined && /[\r\n]/.test(value)) throw invalidInput(`${field}.${name} must be one line`);
  }
  if (contact.fullName.trim() === '') throw invalidInput(`${field}.fullName must not be empty`);
  const waid = (contact.wuid ?? contact.phoneNumber).split('@')[0].replace(/\D/g, '');
  if (contact.wuid !== undefined && waid === '') throw invalidInput(`${field}.wuid must be the contact's WhatsApp number (digits)`);
  if (waid.length < 5) throw invalidInput(`${field}.phoneNumber must be a phone number with country code`);
  const lines = ['BEGIN:VCARD', 'VERSION:3.0', `N:${contact.fullName}`, `FN:${contact.fullName}`];
  if (contact.organization) lines.push(`ORG:${contact.organization};`);
  if (contact.email) lines.push(`EMAIL:${contact.email}`);
  if (contact.url) lines.push(`URL:${contact.url}`);
  lines.push(`item1.TEL;waid=${waid}:${contact.phoneNumber}`, 'item1.X-ABLabel:Celular', 'END:VCARD');
  return lines.join('\n');
}

/** One card is a `contactMessage`; two or more a `contactsArrayMessage` ("<n> contacts"). */
export function contactContent(contacts: ContactCardInput[], contextInfo: Record<string, unknown> | undefined) {
  const cards = contacts.map((contact, i) => ({ displayName: contact.fullName, vcard: contactVcard(contact, `contact[${i}]`) }));
  const context = contextInfo ? { contextInfo } : {};
  if (cards.length === 1) return { messageType: 'contactMessage', content: { contactMessage: { ...cards[0], ...context } } };
  return { messageType: 'contactsArrayMessage', content: { contactsArrayMessage: { displayName: `${cards.length} contacts`, contacts: cards, ...context } } };
}

// One emoji, skin tones and joined sequences included (a whole-string match of an RGI emoji).
// The constructor, not a literal: the `v` flag is newer than the compiler's target (Node 20 has it).
// biome-ignore lint/complexity/useRegexLiterals: a `v` literal does not compile for target ES2022
const singleEmoji = new RegExp('^\\p{RGI_Emoji}$', 'v');

/** A reaction to the message `key`; an empty text removes the reaction. */
export function reactionContent(key: { remoteJid: string; fromMe: boolean; id: string; participant?: string }, reaction: string) {
  if (reaction !== '' && !singleEmoji.test(reaction)) throw invalidInput('Reaction must be a single emoji or empty string');
  return {
    messageType: 'reactionMessage',
    content: {
      reactionMessage: {
        key: { remoteJid: key.remoteJid, fromMe: key.fromMe, id: key.id, ...(key.participant ? { participant: key.participant } : {}) },
        text: reaction,
        senderTimestampMs: String(Date.now()),
      },
    },
  };
}

/**
 * A Meta message template send (WHATSAPP-BUSINESS): Meta's own template object (name, language code, components as
 * given), stored as `templateMessage`; a quote rides along as `contextInfo` (Graph's `context`).
 */
export function templateContent(
  template: { name: string; language: string; components?: Record<string, unknown>[] },
  contextInfo: Record<string, unknown> | undefined,
) {
  return {
    messageType: 'templateMessage',
    content: {
      templateMessage: {
        name: template.name,
        language: { code: template.language },
        ...(template.components && template.components.length > 0 ? { components: template.components } : {}),
        ...(contextInfo ? { contextInfo } : {}),
      },
    },
  };
}
