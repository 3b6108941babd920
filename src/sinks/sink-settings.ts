// What every sink's settings have (an enabled flag and an event list) parsed from a request, and the creation part
// built from one sink's own parser.
import { Type, type TSchema } from 'typebox';
import { invalidInput } from '../core/errors.js';
import { eventNames, resolveEventName, type EventName } from '../core/event-catalog.js';
import type { SinkConfig, SinkCreation, SinkKind } from '../core/event-sink.js';

/** The settings every sink takes: `enabled` (absent: true) and the events it wants (empty or absent: all). */
export interface BasicSinkInput {
  enabled?: boolean;
  events?: string[];
}

/** As Evolution takes a sink at creation: present means enabled unless `enabled` says otherwise. */
const CreationSinkInput = Type.Object({ enabled: Type.Optional(Type.Boolean()), events: Type.Optional(Type.Array(Type.String())) });

/** A field's name inside its parent (`webhook.url`), or alone when the settings came flat (`url`). */
export const fieldAt = (parent: string, name: string) => (parent ? `${parent}.${name}` : name);

function parseEvents(events: string[] | undefined, field: string): EventName[] {
  const out: EventName[] = [];
  (events ?? []).forEach((value, index) => {
    const name = resolveEventName(value);
    if (!name) {
      throw invalidInput(`${fieldAt(field, 'events')}[${index}] "${value}" is not an event name; use one of: ${eventNames.join(', ')}`);
    }
    if (!out.includes(name)) out.push(name);
  });
  return out;
}

/**
 * The settings to store from a request's `input` (found at `field`): the events checked first, then the sink's own
 * options (`optionsOf`, told whether the sink is enabled). A disabled sink keeps no event list.
 */
export function parseSinkSettings(input: BasicSinkInput, field: string, optionsOf: (enabled: boolean) => Record<string, unknown> = () => ({})): SinkConfig {
  const enabled = input.enabled ?? true;
  const events = parseEvents(input.events, field);
  const options = optionsOf(enabled);
  return { enabled, events: enabled ? events : [], options, updatedAt: Date.now() };
}

/**
 * The creation part of a sink taking one body field named after its kind (`websocket`, `rabbitmq`…): present means
 * enabled unless `enabled` says otherwise.
 */
export function singleFieldCreation(
  kind: SinkKind,
  parse: (input: BasicSinkInput, field: string, instanceName: string) => SinkConfig,
  schema: TSchema = CreationSinkInput,
): SinkCreation {
  return {
    fields: { [kind]: Type.Optional(schema) },
    parse(body, instanceName) {
      const input = body[kind] as BasicSinkInput | undefined;
      return input ? [{ kind, config: parse({ enabled: true, ...input }, kind, instanceName) }] : [];
    },
  };
}

/** The creation part of several sinks: their fields together, their settings in list order. */
export function combinedCreation(parts: readonly SinkCreation[]): SinkCreation {
  return {
    fields: Object.assign({}, ...parts.map((part) => part.fields)) as Record<string, TSchema>,
    parse: (body, instanceName) => parts.flatMap((part) => part.parse(body, instanceName)),
  };
}
