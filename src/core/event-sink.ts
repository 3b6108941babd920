// The event-sink contract: a destination's settings, what a sink does when an event is written, its routes and its
// part of instance creation.
import type { FastifyPluginAsync } from 'fastify';
import type { TSchema } from 'typebox';
import type { EventName } from './event-catalog.js';
import type { EventEnvelope, EventSource } from './event-envelope.js';
import type { Instance } from './instance.js';

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

/** One event as the outbox writer writes it, shown to every sink inside the writer's unit. */
export interface WrittenEvent {
  envelope: EventEnvelope;
  source: EventSource;
  event: EventName;
  /** When it was written (ms since the epoch): the outbox row's `created_at`. */
  writtenAt: number;
  /** The instance is being deleted in this unit: nothing will hold its settings afterwards. */
  farewell: boolean;
}

/** What a sink's own routes get: how a set route stores settings (it claims the instance row). */
export interface SinkRoutesOptions {
  setSink(instance: Instance, kind: SinkKind, config: SinkConfig): Promise<void>;
}

/** A destination kind. `Rows` and `Tx` are the store's unit and transaction: core knows no store. */
export interface EventSink<Rows = unknown, Tx = unknown> {
  readonly kind: SinkKind;
  /**
   * The sink's mark on an outbox event (a bit of its `broker_wants`, fixed for good: stored rows keep it), set when
   * the instance's settings want the event when it is written. Relays read it back; sinks that need none leave it out.
   */
  readonly outboxMark?: number;
  /** Whether an instance's settings for this sink want `event`. */
  wants(settings: SinkConfig | undefined, event: EventName): boolean;
  /** Inside the writer's unit: what the sink keeps with the event (webhook: its delivery rows); answers what to do after commit. */
  write?(rows: Rows, written: WrittenEvent): (() => void) | undefined;
  /** Inside the unit deleting the instance: what the sink keeps for the events it has not yet passed on. */
  instanceRemoved?(tx: Tx, instanceId: string): Promise<void>;
  /** Starts its background work (delivery, relaying); stop leaves what is not done for the next start. */
  start?(): Promise<void>;
  stop?(): Promise<void>;
  /** Its own set/find routes (registered under /messenger). */
  readonly routes?: FastifyPluginAsync<SinkRoutesOptions>;
  /** Its part of `instance/create`. */
  readonly creation?: SinkCreation;
}

/** What the sinks add to `instance/create`: their body fields, and the settings those fields ask for. */
export interface SinkCreation {
  /** Body fields of the create request, by name (`webhook`, `websocket`, `webhookUrl`…). */
  fields: Record<string, TSchema>;
  /** The destinations the create body asks for; throws a coded error naming the field to fix. */
  parse(body: Record<string, unknown>, instanceName: string): { kind: SinkKind; config: SinkConfig }[];
}
