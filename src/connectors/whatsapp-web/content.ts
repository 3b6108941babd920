// Message content between the API's JSON form (binary fields as base64) and Baileys' protobuf-shaped objects.
import { getContentType, normalizeMessageContent, proto } from 'baileys';
import { statusFontNumber } from '../../messages/compose.js';

/** How content is written for API callers: bytes as base64, 64-bit numbers as strings, enums as their numbers. */
const jsonOptions = { longs: String, bytes: String, enums: Number, defaults: false, arrays: false, objects: false };

/** Protobuf-shaped content (as Baileys emits it) → plain JSON (as stored and returned). */
export function contentToJson(message: proto.IMessage): Record<string, unknown> {
  const decoded = proto.Message.fromObject(message);
  // toObject is typed `{[k: string]: any}`; it is plain JSON data by construction (jsonOptions).
  return proto.Message.toObject(decoded, jsonOptions) as Record<string, unknown>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Stored JSON content → the protobuf message Baileys relays. protobufjs' fromObject turns base64 strings into bytes
 * and numeric strings into 64-bit values; status fonts are stored by name (some older names no longer in the
 * enum), so they are turned into their wire numbers first.
 */
export function jsonToContent(content: Record<string, unknown>): proto.Message {
  const copy = structuredClone(content);
  const text = copy.extendedTextMessage;
  if (isRecord(text) && typeof text.font === 'string') {
    const font = statusFontNumber(text.font);
    if (font === undefined) delete text.font;
    else text.font = font;
  }
  return proto.Message.fromObject(copy);
}

/** The content's type key (`conversation`, `imageMessage`, …), as Baileys names it. */
function contentTypeOf(content: proto.IMessage | Record<string, unknown>): string | undefined {
  return getContentType(content as proto.IMessage);
}

/** Message types that carry no message of their own (they change or reveal other messages). */
const notMessages = new Set(['protocolMessage', 'senderKeyDistributionMessage', 'messageContextInfo', 'keepInChatMessage', 'encReactionMessage']);

/**
 * An incoming message's content as the API reports it, or null when it is not a message a client should see
 * (protocol messages, stubs without content). Wrappers (ephemeral, view once, document with caption) are opened,
 * as Evolution does; a text with context (`extendedTextMessage`) also carries its text as `conversation` and is
 * typed `conversation`, so clients that read only `message.conversation` see every text, while quotes and mentions
 * stay in `extendedTextMessage.contextInfo`.
 */
export function inboundContent(raw: proto.IMessage | null | undefined): { messageType: string; content: Record<string, unknown> } | null {
  if (!raw) return null;
  const inner = normalizeMessageContent(raw);
  if (!inner) return null;
  const content = contentToJson(inner);
  if (raw.messageContextInfo && !content.messageContextInfo) {
    content.messageContextInfo = contentToJson({ messageContextInfo: raw.messageContextInfo }).messageContextInfo;
  }
  let messageType = contentTypeOf(content);
  if (!messageType || notMessages.has(messageType)) return null;
  const extended = content.extendedTextMessage;
  if (messageType === 'extendedTextMessage' && isRecord(extended) && typeof extended.text === 'string') {
    content.conversation = extended.text;
    messageType = 'conversation';
  }
  return { messageType, content };
}
