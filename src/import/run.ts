// The import of an Evolution deployment: read it (one read-only transaction), then each instance planned, checked
// and written in its own unit of work, a line per instance and a summary; a failed instance fails alone.
import type { ConnectorKinds } from '../core/connector-kind.js';
import type { SinkCreation } from '../core/event-sink.js';
import type { Instance } from '../core/instance.js';
import type { EvolutionDatabase } from './evolution-database.js';
import { openEvolutionDatabase } from './open-evolution-database.js';
import type { EvolutionInstance } from './evolution-model.js';
import { EvolutionReader } from './evolution-reader.js';
import { readEvolutionSession, type KeyPlaces } from './evolution-session.js';
import { historyRows } from './history-rows.js';
import { chooseKey } from './instance-key.js';
import { planInstance } from './instance-plan.js';
import { reasonOf } from './problem.js';
import { RedisKeys } from './redis-keys.js';
import { outcomeLines, summaryLines, type ImportSummary, type Outcome } from './report.js';
import { writeInstance, type ImportStore } from './writer.js';

export interface ImportOptions {
  /** Evolution's database (its DATABASE_CONNECTION_URI): postgresql:// or mysql://. */
  from: string;
  /** Evolution's instances folder (signal keys as files). */
  instancesDir?: string;
  /** Evolution's Redis (signal keys in its cache) and its key prefix (CACHE_REDIS_PREFIX_KEY). */
  redis?: string;
  redisPrefix: string;
  /** Only these instance names. */
  only?: string[];
  dryRun: boolean;
  withHistory: boolean;
  /** Overwrite instances that already exist in Switchboard (otherwise they are skipped). */
  replace: boolean;
}

export interface ImportDeps extends ImportStore {
  kinds: ConnectorKinds;
  sinkCreation: SinkCreation;
  globalApiKey: string;
}

/** Evolution, opened for reading: its database (one read-only transaction) and, when given, its Redis. */
export interface EvolutionSources {
  db: EvolutionDatabase;
  redis?: RedisKeys;
  close(): Promise<void>;
}

/** Opens what the options point at; a database or Redis that cannot be reached throws a line saying so. */
export async function openEvolutionSources(options: ImportOptions): Promise<EvolutionSources> {
  const db = await openEvolutionDatabase(options.from);
  let redis: RedisKeys | undefined;
  try {
    redis = options.redis ? await RedisKeys.open(options.redis, options.redisPrefix) : undefined;
  } catch (error) {
    await db.close();
    throw error;
  }
  return {
    db,
    redis,
    async close() {
      await redis?.close();
      await db.close();
    },
  };
}

/**
 * Runs the import, printing as it goes; answers the summary (the caller exits non-zero when any failed). Opens
 * Evolution itself unless `opened` is given, and closes it either way.
 */
export async function importEvolution(
  options: ImportOptions,
  deps: ImportDeps,
  print: (line: string) => void,
  opened?: EvolutionSources,
): Promise<ImportSummary> {
  const sources = opened ?? (await openEvolutionSources(options));
  const { db } = sources;
  try {
    const reader = new EvolutionReader(db);
    const instances = await reader.instances(options.only);
    const places: KeyPlaces = { instancesDir: options.instancesDir, redis: sources.redis };
    const outcomes: Outcome[] = [];
    const missing = (options.only ?? []).filter((name) => !instances.some((i) => i.row.name === name));
    const total = instances.length + missing.length;
    print(`${options.dryRun ? 'Dry run: reading' : 'Importing'} ${instances.length} instances from ${db.address}`);
    // Keys given out during a dry run, which writes none into the registry.
    const planned = new Map<string, string>();
    for (const instance of instances) {
      const outcome = await importOne(instance, reader, places, options, deps, planned);
      outcomes.push(outcome);
      for (const line of outcomeLines(outcome, outcomes.length, total)) print(line);
    }
    for (const name of missing) {
      const outcome: Outcome = { name, result: 'failed', reason: 'no instance of this name in Evolution (--only)' };
      outcomes.push(outcome);
      for (const line of outcomeLines(outcome, outcomes.length, total)) print(line);
    }
    const summary: ImportSummary = { dryRun: options.dryRun, source: db.address, outcomes };
    for (const line of summaryLines(summary)) print(line);
    return summary;
  } finally {
    await sources.close();
  }
}

async function importOne(
  evolution: EvolutionInstance,
  reader: EvolutionReader,
  places: KeyPlaces,
  options: ImportOptions,
  deps: ImportDeps,
  planned: Map<string, string>,
): Promise<Outcome> {
  const name = evolution.row.name;
  try {
    const existing = deps.registry.byInstanceName(name);
    if (existing && !options.replace) return { name, result: 'skipped', reason: 'already in Switchboard (--replace overwrites it)' };
    const plan = planInstance(evolution, deps);
    const sameId = deps.registry.byInstanceId(plan.id);
    if (sameId && sameId.name !== name && sameId.id !== existing?.id) {
      return { name, result: 'failed', reason: `its id ${plan.id} is already the id of instance "${sameId.name}" in Switchboard` };
    }
    const session = plan.integration === 'WHATSAPP-BAILEYS' ? await readEvolutionSession(evolution, places) : null;
    const history = options.withHistory ? historyRows(plan.id, await reader.history(evolution.row.id)) : null;
    const key = chooseKey(plan.apikey, deps.globalApiKey, (token) => keyOwner(token, deps, existing, planned));
    planned.set(key.apikey, name);
    if (!options.dryRun) await writeInstance(deps, plan, key.apikey, session, history, existing);
    const details = [
      plan.integration,
      session?.linked ? `session with ${session.keys.length} signal keys (from ${session.where})` : session ? session.why : undefined,
      plan.carried.length > 0 ? plan.carried.join(', ') : undefined,
      history
        ? `${history.messages.length} messages, ${history.chats.length} chats, ${history.contacts.length} contacts, ${history.labels.length} labels`
        : undefined,
      existing ? 'replacing the instance of this name' : undefined,
    ].filter((d): d is string => d !== undefined);
    const ignored =
      session?.linked && session.ignored.length > 0
        ? [`${session.ignored.length} entries that are no signal key (${session.ignored.slice(0, 3).join(', ')}…)`]
        : [];
    // WHATSAPP-BUSINESS: Evolution's key is the Meta access token; kept as both, so its clients go on working.
    const sharedMetaKey = plan.providerToken !== null && key.apikey === plan.providerToken;
    return {
      name,
      result: options.dryRun ? 'would import' : 'imported',
      details,
      notCarried: [...plan.notCarried, ...(history?.notCarried ?? []), ...ignored],
      warnings: [
        ...(sharedMetaKey ? ['its instance key is its Meta access token, as in Evolution: give it a key of its own (docs/migrating-from-evolution.md)'] : []),
        ...(key.warning ? [key.warning] : []),
      ],
      sharedMetaKey,
      proxied: plan.proxy?.enabled === true,
    };
  } catch (error) {
    return { name, result: 'failed', reason: reasonOf(error) };
  }
}

/** The instance that already answers to `token`, other than the one being replaced. */
function keyOwner(token: string, deps: ImportDeps, replacing: Instance | undefined, planned: Map<string, string>): string | undefined {
  const owner = deps.registry.byApiKey(token);
  if (owner && owner.id !== replacing?.id) return owner.name;
  return planned.get(token);
}
