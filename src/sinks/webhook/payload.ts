// The JSON body of a webhook delivery: the stored envelope plus `destination`, media inlined when asked.
import type { Logger } from '../../platform/logger.js';
import type { EventEnvelope } from '../../core/event-envelope.js';
import { wantsMediaBase64, withBase64, type MediaResolver } from './media-base64.js';

/** Evolution's field order, with our event `id` first; `destination` is the URL this delivery goes to. */
export function deliveryBody(envelope: EventEnvelope, destination: string): string {
  return JSON.stringify({
    id: envelope.id,
    event: envelope.event,
    instance: envelope.instance,
    data: envelope.data,
    destination,
    date_time: envelope.date_time,
    sender: envelope.sender,
    server_url: envelope.server_url,
    apikey: envelope.apikey,
  });
}

/** Puts the media into `data.message.base64` when the webhook asks for it and a resolver can supply it. */
export async function inlineMedia(
  event: string,
  envelope: EventEnvelope,
  wanted: boolean,
  resolver: MediaResolver | undefined,
  logger: Logger,
): Promise<EventEnvelope> {
  if (!wanted || !resolver || !wantsMediaBase64(event, envelope.data)) return envelope;
  try {
    const base64 = await resolver(envelope);
    return base64 ? withBase64(envelope, base64) : envelope;
  } catch (error) {
    // A media download failing must not hold the event back: it goes without base64, as upstream does.
    logger.warn({ eventId: envelope.id, err: (error as Error).message }, 'webhook media could not be inlined as base64');
    return envelope;
  }
}
