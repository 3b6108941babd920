// The websocket sink: committed events fanned out to the socket.io servers attached to it, and its routes.
import type { EventName } from '../../core/event-catalog.js';
import type { SinkConfig, WrittenEvent } from '../../core/event-sink.js';
import { sinkWants, type SinkConfigs } from '../../events/sink-configs.js';
import type { OutboxSink } from '../../events/writer.js';
import { parseSinkSettings, singleFieldCreation } from '../sink-settings.js';
import type { FanOut } from './fan-out.js';
import { websocketRoutes } from './routes.js';

export class WebsocketSink implements OutboxSink {
  readonly kind = 'websocket';
  readonly routes;
  readonly creation = singleFieldCreation('websocket', (input, field) => parseSinkSettings(input, field));
  private readonly fanOuts = new Set<FanOut>();

  constructor(settings: Pick<SinkConfigs, 'get'>) {
    this.routes = websocketRoutes(settings);
  }

  wants(settings: SinkConfig | undefined, event: EventName): boolean {
    return sinkWants(settings, event);
  }

  /** Fans out each committed event (a socket.io server attached to the HTTP server); answers how to stop. */
  follow(fanOut: FanOut): () => void {
    this.fanOuts.add(fanOut);
    return () => this.fanOuts.delete(fanOut);
  }

  write(_unit: unknown, { envelope, source, event }: WrittenEvent): () => void {
    return () => {
      for (const fanOut of this.fanOuts) fanOut(envelope, source.id, event);
    };
  }
}
