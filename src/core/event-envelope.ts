// An event as it leaves the service (Evolution's envelope plus an id) and the instance it comes from.
import type { Instance } from './instance.js';

/** What an event needs to know about the instance it belongs to. */
export interface EventSource {
  id: string;
  name: string;
  ownerJid: string | null;
  /** Only set when the operator opted in to exposing instance keys in events. */
  apikey?: string | null;
}

export interface EventEnvelope {
  id: string;
  event: string;
  instance: string;
  data: unknown;
  date_time: string;
  sender: string | null;
  server_url: string;
  apikey: string | null;
}

/** The instance as the source of its events; its key is unsealed only when an envelope carries it (an opt-in setting). */
export function eventSourceOf(instance: Instance, apikeyOf: (instance: Instance) => string): EventSource {
  return {
    id: instance.id,
    name: instance.name,
    ownerJid: instance.ownerJid,
    get apikey() {
      return apikeyOf(instance);
    },
  };
}
