// The event-sink contract: a destination's settings, and what a sink adds to instance creation.
import type { TSchema } from 'typebox';
import type { EventName } from './event-catalog.js';

/** A destination kind: `webhook`, `websocket`, `rabbitmq`, `nats`… */
export type SinkKind = string;

/** One destination's settings for one instance, as stored. */
export interface SinkConfig {
  enabled: boolean;
  events: EventName[];
  /** Sink-specific options: for webhooks url, byEvents, base64, headers, secretSealed. */
  options: Record<string, unknown>;
  updatedAt: number;
}

/** What the sinks add to `instance/create`: their body fields, and the settings those fields ask for. */
export interface SinkCreation {
  /** Body fields of the create request, by name (`webhook`, `websocket`, `webhookUrl`…). */
  fields: Record<string, TSchema>;
  /** The destinations the create body asks for; throws a coded error naming the field to fix. */
  parse(body: Record<string, unknown>, instanceName: string): { kind: SinkKind; config: SinkConfig }[];
}
