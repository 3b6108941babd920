// Who may join which websocket namespace: the global key anywhere, an instance key only its own `/<instance>`.
import type { Instance } from '../../core/instance.js';
import { secretsEqual } from '../../platform/util/api-keys.js';
import type { HandshakeKey } from './handshake-key.js';

export interface AccessDeps {
  globalApiKey: string;
  /** Whether the global namespace `/` carries events (WEBSOCKET_GLOBAL_EVENTS). */
  globalEvents: boolean;
  byApiKey(key: string): Instance | undefined;
  byInstanceName(name: string): Instance | undefined;
}

/** A refused handshake: the client sees `message` and `data.status` in its `connect_error`. */
export interface Refusal {
  refused: true;
  status: 401 | 403 | 404;
  message: string;
}

type Caller = { kind: 'global' } | { kind: 'instance'; instance: Instance };

/** What a socket admitted to an instance namespace is bound to: the kind of key it showed and the instance. */
export type Grant = { keyKind: Caller['kind']; instance: Instance };

export function isRefusal(value: Caller | Grant | Refusal): value is Refusal {
  return 'refused' in value;
}

function refuse(status: Refusal['status'], message: string): Refusal {
  return { refused: true, status, message };
}

/** Authentication: runs before any lookup by name, so an unauthenticated client learns nothing about names. */
function identify(key: HandshakeKey, deps: AccessDeps): Caller | Refusal {
  if (key.kind === 'none') {
    return refuse(401, 'apikey is required: send it as auth.apikey in the handshake, or as the apikey header or query parameter');
  }
  if (key.kind === 'malformed') return refuse(401, 'apikey must be a single string');
  // Compared every time, so the answer takes as long whether or not the key is the global one.
  const isGlobal = secretsEqual(key.value, deps.globalApiKey);
  const instance = deps.byApiKey(key.value);
  if (isGlobal) return { kind: 'global' };
  if (instance) return { kind: 'instance', instance };
  return refuse(401, 'Invalid apikey');
}

/** The default namespace `/`: the stream of every instance's events, for the global key only. */
export function admitGlobal(key: HandshakeKey, deps: AccessDeps): Refusal | null {
  const caller = identify(key, deps);
  if (isRefusal(caller)) return caller;
  if (caller.kind !== 'global') return refuse(403, 'The global namespace "/" needs the global apikey; an instance key may join only "/<its instance name>"');
  if (!deps.globalEvents) {
    return refuse(404, 'Global websocket events are off (WEBSOCKET_GLOBAL_EVENTS=false); connect to "/<instance name>" instead');
  }
  return null;
}

/** An instance namespace `/<name>`: the global key for any existing instance, an instance key for its own only. */
export function admitInstance(name: string, key: HandshakeKey, deps: AccessDeps): Grant | Refusal {
  const caller = identify(key, deps);
  if (isRefusal(caller)) return caller;
  const target = deps.byInstanceName(name);
  if (caller.kind === 'instance') {
    // Unknown and foreign names answer alike, so an instance key cannot probe other tenants' names.
    if (!target || target.id !== caller.instance.id) {
      return refuse(403, 'This apikey may join only the namespace of its own instance');
    }
    return { keyKind: 'instance', instance: target };
  }
  if (!target) return refuse(404, `Instance "${name}" does not exist`);
  return { keyKind: 'global', instance: target };
}
