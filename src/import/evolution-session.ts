// The WhatsApp Web session of one Evolution instance: its credentials (the Session row, or beside the keys) and every
// signal key (the instances folder or Redis), or why there is none to carry over.
import { join } from 'node:path';
import type { AuthenticationCreds } from 'baileys';
import { credsLinked } from '../connectors/whatsapp-web/auth-state.js';
import { decodeCreds } from './baileys-json.js';
import type { EvolutionInstance } from './evolution-model.js';
import { keysFolderOf, readKeysFolder } from './instances-folder.js';
import { ImportProblem } from './problem.js';
import type { RedisKeys } from './redis-keys.js';
import type { FoundKeys, SignalKey } from './signal-keys.js';

/** Where the keys may be: Evolution's instances folder, its Redis cache, or both. */
export interface KeyPlaces {
  instancesDir?: string;
  redis?: RedisKeys;
}

export type EvolutionSession =
  | { linked: false; why: string }
  | { linked: true; creds: AuthenticationCreds; keys: SignalKey[]; where: string; ignored: string[] };

/** The instance's key store: Redis first (when given and it holds a hash), then its folder. */
async function findKeys(instance: EvolutionInstance, places: KeyPlaces): Promise<FoundKeys | null> {
  const fromRedis = places.redis ? await places.redis.read(instance.row.id) : null;
  if (fromRedis) return fromRedis;
  if (!places.instancesDir) return null;
  const folder = await keysFolderOf(places.instancesDir, instance.row);
  return folder ? readKeysFolder(folder) : null;
}

/** What was looked at, for the line of an instance whose keys are nowhere. */
function placesTried(instance: EvolutionInstance, places: KeyPlaces): string {
  const tried: string[] = [];
  if (places.redis) tried.push(`no Redis hash ${places.redis.hashOf(instance.row.id)}`);
  if (places.instancesDir) tried.push(`no folder ${join(places.instancesDir, instance.row.id)}`);
  if (tried.length === 0) return "give --instances-dir (Evolution's instances folder) or --redis (its cache) to import them";
  return tried.join(', ');
}

/** One key per type and id (the last read wins), so the store's key rows stay unique. */
function uniqueKeys(keys: SignalKey[]): SignalKey[] {
  const byName = new Map<string, SignalKey>();
  for (const key of keys) byName.set(`${key.type}\u0000${key.id}`, key);
  return [...byName.values()];
}

/**
 * Reads the session. An instance that never completed pairing has none (not a failure); a linked one whose
 * credentials are damaged, or whose keys are missing, throws an ImportProblem naming what is wrong.
 */
export async function readEvolutionSession(instance: EvolutionInstance, places: KeyPlaces): Promise<EvolutionSession> {
  let creds: AuthenticationCreds | null = null;
  if (instance.sessionCreds !== null) {
    creds = decodeCreds(instance.sessionCreds, 'Session.creds');
    if (!credsLinked(creds)) return { linked: false, why: 'not linked in Evolution (pairing never completed)' };
  }
  const found = await findKeys(instance, places);
  if (!creds) {
    if (!found?.credsText) return { linked: false, why: 'not linked in Evolution (no session)' };
    creds = decodeCreds(found.credsText, `the creds kept in ${found.where}`);
    if (!credsLinked(creds)) return { linked: false, why: 'not linked in Evolution (pairing never completed)' };
  }
  if (!found) throw new ImportProblem(`linked, but its signal keys are missing: ${placesTried(instance, places)}`);
  if (found.keys.length === 0) throw new ImportProblem(`linked, but ${found.where} holds no signal keys`);
  return { linked: true, creds, keys: uniqueKeys(found.keys), where: found.where, ignored: found.ignored };
}
