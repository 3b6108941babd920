// The instance as an event source: name, owner address and (only when opted in) its key.
import type { EventSource } from '../events/writer.js';
import type { Instance } from './model.js';

export function eventSourceOf(instance: Instance, apikeyOf: (instance: Instance) => string): EventSource {
  return { id: instance.id, name: instance.name, ownerJid: instance.ownerJid, apikey: apikeyOf(instance) };
}
