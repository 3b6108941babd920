// Meta's webhook payload read defensively, and its messages and statuses in the shapes the core stores and emits.
import type { InboundMessage } from '../../core/connector.js';
import type { MessageStatus } from '../../core/message-status.js';

export interface GraphContact {
  profile?: { name?: string };
  wa_id?: string;
}

/** One entry of `value.messages`: `{from, id, timestamp, type, context?, [type]: {...}}`. */
export interface GraphMessage {
  from?: string;
  id?: string;
  timestamp?: string;
  type?: string;
  group_id?: string;
  context?: { id?: string; from?: string; forwarded?: boolean; frequently_forwarded?: boolean };
  [part: string]: unknown;
}

/** One entry of `value.statuses`: `{id, status, timestamp, recipient_id, errors?}`. */
export interface GraphStatus {
  id?: string;
  status?: string;
  timestamp?: string;
  recipient_id?: string;
  errors?: { code?: number; title?: string; message?: string; error_data?: { details?: string } }[];
}

/** The part of one `entry[].changes[]` that matters: which number it is for and what happened. */
export interface GraphChange {
  phoneNumberId: string;
  contacts: GraphContact[];
  messages: GraphMessage[];
  statuses: GraphStatus[];
  errors: { code?: number; title?: string }[];
}

const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
const list = <T>(value: unknown): T[] => (Array.isArray(value) ? (value.filter((v) => typeof v === 'object' && v !== null) as T[]) : []);
const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** Every `messages` change of a `whatsapp_business_account` payload (other fields — templates, account updates — are skipped). */
export function changesOf(payload: unknown): GraphChange[] {
  const changes: GraphChange[] = [];
  for (const entry of list<Record<string, unknown>>(record(payload).entry)) {
    for (const change of list<Record<string, unknown>>(entry.changes)) {
      if (change.field !== undefined && change.field !== 'messages') continue;
      const value = record(change.value);
      const phoneNumberId = str(record(value.metadata).phone_number_id);
      if (!phoneNumberId) continue;
      changes.push({
        phoneNumberId,
        contacts: list<GraphContact>(value.contacts),
        messages: list<GraphMessage>(value.messages),
        statuses: list<GraphStatus>(value.statuses),
        errors: list<{ code?: number; title?: string }>(value.errors),
      });
    }
  }
  return changes;
}

const statusNames: Record<string, MessageStatus> = {
  sent: 'SERVER_ACK',
  delivered: 'DELIVERY_ACK',
  read: 'READ',
  played: 'PLAYED',
  failed: 'ERROR',
};

/** Meta's status name as ours; null for those without one (`deleted`, unknown future names). */
export function statusOf(status: GraphStatus): MessageStatus | null {
  const name = status.status ?? '';
  // Own keys only: Meta's text must not reach Object.prototype (`constructor`, `__proto__`).
  return Object.hasOwn(statusNames, name) ? statusNames[name] : null;
}

/** Meta ids a message refers to (the message it replies or reacts to), to be named by our key ids when they are ours. */
export function referencedIds(message: GraphMessage): string[] {
  const ids = [str(message.context?.id), str(record(message.reaction).message_id)];
  return ids.filter((id): id is string => id !== undefined);
}

const userJid = (id: string) => `${id}@s.whatsapp.net`;

const mediaKeys: Record<string, string> = {
  image: 'imageMessage',
  video: 'videoMessage',
  audio: 'audioMessage',
  document: 'documentMessage',
  sticker: 'stickerMessage',
};

/**
 * A received Cloud API message as stored: its wamid is its key id, the sender's number its chat, its content in the
 * WhatsApp shape clients already read (`conversation`, `imageMessage`…; Meta's media id kept as `mediaId`). Kinds
 * without a WhatsApp shape keep Meta's object under Meta's type name. `ours` maps wamids of our sends to our key ids.
 */
export function toInboundMessage(message: GraphMessage, contacts: GraphContact[], ours: Map<string, string>): InboundMessage | null {
  const keyId = str(message.id);
  const from = str(message.from);
  if (!keyId || !from) return null;
  const remoteJid = message.group_id ? `${message.group_id}@g.us` : userJid(from);
  const type = str(message.type) ?? 'unknown';
  const raw = Object.hasOwn(message, type) ? message[type] : undefined;
  const contextInfo = contextInfoOf(message, ours);
  const { messageType, content } = contentOf(type, raw, remoteJid, contextInfo, ours);
  const timestamp = Number(message.timestamp);
  return {
    keyId,
    remoteJid,
    fromMe: false,
    participant: message.group_id ? userJid(from) : null,
    pushName: contacts.find((c) => c.wa_id === from)?.profile?.name ?? null,
    messageType,
    content,
    timestamp: Number.isFinite(timestamp) && timestamp > 0 ? Math.floor(timestamp) : Math.floor(Date.now() / 1000),
  };
}

function contextInfoOf(message: GraphMessage, ours: Map<string, string>): Record<string, unknown> | undefined {
  const context = message.context;
  if (!context) return undefined;
  const info: Record<string, unknown> = {};
  const quoted = str(context.id);
  if (quoted) {
    info.stanzaId = ours.get(quoted) ?? quoted;
    if (context.from) info.participant = userJid(context.from);
  }
  if (context.forwarded || context.frequently_forwarded) {
    info.isForwarded = true;
    if (context.frequently_forwarded) info.forwardingScore = 5;
  }
  return Object.keys(info).length > 0 ? info : undefined;
}

function contentOf(
  type: string,
  raw: unknown,
  remoteJid: string,
  contextInfo: Record<string, unknown> | undefined,
  ours: Map<string, string>,
): { messageType: string; content: Record<string, unknown> } {
  const part = record(raw);
  const withContext = (body: Record<string, unknown>) => (contextInfo ? { ...body, contextInfo } : body);
  if (type === 'text') {
    const text = str(part.body) ?? '';
    return contextInfo
      ? { messageType: 'extendedTextMessage', content: { extendedTextMessage: { text, contextInfo } } }
      : { messageType: 'conversation', content: { conversation: text } };
  }
  const mediaKey = Object.hasOwn(mediaKeys, type) ? mediaKeys[type] : undefined;
  if (mediaKey) {
    const body: Record<string, unknown> = { mimetype: str(part.mime_type) ?? '', mediaId: str(part.id) ?? '' };
    if (str(part.sha256)) body.fileSha256 = part.sha256;
    if (str(part.caption)) body.caption = part.caption;
    if (type === 'document') body.fileName = str(part.filename) ?? 'file';
    if (type === 'audio') body.ptt = part.voice === true;
    if (type === 'sticker') body.isAnimated = part.animated === true;
    return { messageType: mediaKey, content: { [mediaKey]: withContext(body) } };
  }
  if (type === 'location') {
    const body: Record<string, unknown> = { degreesLatitude: part.latitude, degreesLongitude: part.longitude };
    for (const field of ['name', 'address', 'url'] as const) if (str(part[field])) body[field] = part[field];
    return { messageType: 'locationMessage', content: { locationMessage: withContext(body) } };
  }
  if (type === 'contacts') {
    // Meta puts the cards of a `contacts` message in an array under the type name itself.
    const cards = list<Record<string, unknown>>(raw).map(contactCard);
    if (cards.length === 1) return { messageType: 'contactMessage', content: { contactMessage: withContext(cards[0]) } };
    return {
      messageType: 'contactsArrayMessage',
      content: { contactsArrayMessage: withContext({ displayName: `${cards.length} contacts`, contacts: cards }) },
    };
  }
  if (type === 'interactive') {
    const listReply = record(part.list_reply);
    if (part.type === 'list_reply') {
      return {
        messageType: 'listResponseMessage',
        content: {
          listResponseMessage: withContext({
            title: str(listReply.title) ?? '',
            ...(str(listReply.description) ? { description: listReply.description } : {}),
            listType: 'SINGLE_SELECT',
            singleSelectReply: { selectedRowId: str(listReply.id) ?? '' },
          }),
        },
      };
    }
    if (part.type === 'button_reply') {
      const button = record(part.button_reply);
      return {
        messageType: 'buttonsResponseMessage',
        content: { buttonsResponseMessage: withContext({ selectedButtonId: str(button.id) ?? '', selectedDisplayText: str(button.title) ?? '' }) },
      };
    }
  }
  if (type === 'button') {
    return {
      messageType: 'buttonsResponseMessage',
      content: { buttonsResponseMessage: withContext({ selectedButtonId: str(part.payload) ?? '', selectedDisplayText: str(part.text) ?? '' }) },
    };
  }
  if (type === 'reaction') {
    const target = str(part.message_id) ?? '';
    const ourKey = ours.get(target);
    return {
      messageType: 'reactionMessage',
      content: {
        reactionMessage: { key: { remoteJid, fromMe: ourKey !== undefined, id: ourKey ?? target }, text: str(part.emoji) ?? '' },
      },
    };
  }
  return { messageType: type, content: { [type]: raw ?? {} } };
}

function contactCard(contact: Record<string, unknown>): Record<string, unknown> {
  const name = record(contact.name);
  const displayName = str(name.formatted_name) ?? str(name.first_name) ?? 'Contact';
  const lines = ['BEGIN:VCARD', 'VERSION:3.0', `FN:${displayName}`];
  for (const phone of list<Record<string, unknown>>(contact.phones)) {
    const number = str(phone.phone);
    if (!number) continue;
    const waid = str(phone.wa_id);
    lines.push(`TEL;type=${str(phone.type) ?? 'CELL'}${waid ? `;waid=${waid}` : ''}:${number}`);
  }
  lines.push('END:VCARD');
  return { displayName, vcard: lines.join('\n') };
}
