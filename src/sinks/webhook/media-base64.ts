// The `base64` webhook option: finds media in message events and lets a pluggable resolver inline it.
import type { MediaKind } from '../../media/types.js';
import type { EventEnvelope } from '../../core/event-envelope.js';

/** Returns the media of the event's message as base64, or null when it cannot (the payload then goes unchanged). */
export type MediaResolver = (envelope: EventEnvelope) => Promise<string | null>;

const mediaEvents = new Set(['MESSAGES_UPSERT', 'SEND_MESSAGE']);
/** Message types that carry downloadable media, and the kind whose keys encrypt it (round videos use video keys). */
const mediaKinds: Record<string, MediaKind> = {
  imageMessage: 'image',
  videoMessage: 'video',
  audioMessage: 'audio',
  documentMessage: 'document',
  stickerMessage: 'sticker',
  ptvMessage: 'video',
};

/** A media node of a message: `node` is e.g. the `imageMessage` object, `kind` picks its encryption keys. */
export interface FoundMedia {
  type: string;
  kind: MediaKind;
  node: Record<string, unknown>;
}

/** True for `MESSAGES_UPSERT` / `SEND_MESSAGE` whose `data.message` holds a media message with a `url` and no base64 yet. */
export function wantsMediaBase64(event: string, data: unknown): boolean {
  if (!mediaEvents.has(event)) return false;
  const message = record(record(data)?.message);
  if (!message || typeof message.base64 === 'string') return false;
  return findMedia(message) !== undefined;
}

/** The media node of an event's `data.message`, if it holds one. */
export function mediaOfEvent(data: unknown): FoundMedia | undefined {
  const message = record(record(data)?.message);
  return message ? findMedia(message) : undefined;
}

/** The first media node with a non-empty `url` in a message's content (documents with a caption included), if any. */
function findMedia(message: Record<string, unknown>): FoundMedia | undefined {
  for (const [type, kind] of Object.entries(mediaKinds)) {
    const node = record(message[type]);
    if (node && typeof node.url === 'string' && node.url !== '') return { type, kind, node };
  }
  // Documents with a caption are wrapped one level deeper.
  const wrapped = record(record(message.documentWithCaptionMessage)?.message);
  return wrapped ? findMedia(wrapped) : undefined;
}

/** A copy of the envelope with `data.message.base64` set (the stored envelope is never changed). */
export function withBase64(envelope: EventEnvelope, base64: string): EventEnvelope {
  const data = record(envelope.data) ?? {};
  const message = record(data.message) ?? {};
  return { ...envelope, data: { ...data, message: { ...message, base64 } } };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
