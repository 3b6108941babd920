// Emits committed events to socket.io: each instance's namespace (its websocket settings filter) and the global `/`.
import type { Server } from 'socket.io';
import type { Logger } from '../../platform/logger.js';
import type { EventName } from '../../core/event-catalog.js';
import type { EventEnvelope } from '../../core/event-envelope.js';
import type { Subscribers } from './subscribers.js';

/** What a websocket client receives: the envelope's fields (copied one by one, so nothing else on the object leaks). */
export type WebsocketPayload = EventEnvelope;

function websocketPayload(envelope: EventEnvelope): WebsocketPayload {
  return {
    id: envelope.id,
    event: envelope.event,
    instance: envelope.instance,
    data: envelope.data,
    date_time: envelope.date_time,
    sender: envelope.sender,
    server_url: envelope.server_url,
    apikey: envelope.apikey,
  };
}

/**
 * Emits one committed event of an instance to the clients that follow it. `wanted`: the instance's websocket settings
 * wanted the event when it was written (its namespace gets it); the global stream gets every event.
 */
export type FanOut = (envelope: EventEnvelope, instanceId: string | null, event: EventName, wanted: boolean) => void;

export interface FanOutDeps {
  io: Server;
  subscribers: Subscribers;
  instanceExists(instanceId: string): boolean;
  globalEvents: boolean;
  logger: Logger;
  isClosed(): boolean;
}

const removalEvents: ReadonlySet<EventName> = new Set(['INSTANCE_DELETE', 'REMOVE_INSTANCE']);

export function websocketFanOut(deps: FanOutDeps): FanOut {
  const { io, subscribers, logger } = deps;
  return (envelope, instanceId, event, wanted) => {
    if (deps.isClosed()) return;
    try {
      const payload = websocketPayload(envelope);
      // Global mode is upstream's: every event of every instance, no per-instance settings, no filter.
      if (deps.globalEvents) io.of('/').emit(envelope.event, payload);
      if (!instanceId) return;
      const sockets = subscribers.of(instanceId);
      if (wanted) for (const socket of sockets) socket.emit(envelope.event, payload);
      if (removalEvents.has(event)) {
        // After the rest of the unit's events went out: a deleted instance's followers are let go.
        setImmediate(() => {
          if (!deps.instanceExists(instanceId)) subscribers.drop(instanceId);
        });
      }
    } catch (error) {
      logger.warn({ instance: envelope.instance, event: envelope.event, err: error }, 'websocket emit failed');
    }
  };
}
