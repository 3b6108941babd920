// The `base64` webhook option: finds media in message events and lets a pluggable resolver inline it.
import type { EventEnvelope } from '../writer.js';

/** Returns the media of the event's message as base64, or null when it cannot (the payload then goes unchanged). */
export type MediaResolver = (envelope: EventEnvelope) => Promise<string | null>;

const mediaEvents = new Set(['MESSAGES_UPSERT', 'SEND_MESSAGE']);
const mediaKinds = ['imageMessage', 'videoMessage', 'audioMessage', 'documentMessage', 'stickerMessage', 'ptvMessage'];

/** True for `MESSAGES_UPSERT` / `SEND_MESSAGE` whose `data.message` holds a media message with a `url` and no base64 yet. */
export function wantsMediaBase64(event: string, data: unknown): boolean {
  if (!mediaEvents.has(event)) return false;
  const message = record(record(data)?.message);
  if (!message || typeof message.base64 === 'string') return false;
  return findMedia(message) !== undefined;
}

function findMedia(message: Record<string, unknown>): Record<string, unknown> | undefined {
  for (const kind of mediaKinds) {
    const media = record(message[kind]);
    if (media && typeof media.url === 'string' && media.url !== '') return media;
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
