// Writes one planned instance into Switchboard's store in one unit of work: the instance, its destinations, its
// proxy, its WhatsApp Web session and keys, and its history. All of it or nothing.
import type { Insertable } from 'kysely';
import type { Instance } from '../core/instance.js';
import type { SinkConfigs } from '../events/sink-configs.js';
import type { ProxyStore } from '../instances/proxies.js';
import type { InstanceRegistry } from '../instances/registry.js';
import type { InstanceRemoval } from '../instances/removal.js';
import { storeNewSession } from '../instances/sessions.js';
import { sessionRecordOf, storedKeyValue } from '../connectors/whatsapp-web/auth-state.js';
import type { Db } from '../platform/store/db.js';
import type { Database } from '../platform/store/schema.js';
import { inUnit, type Unit } from '../platform/store/unit.js';
import type { EvolutionSession } from './evolution-session.js';
import type { HistoryRows } from './history-rows.js';
import type { InstancePlan } from './instance-plan.js';

/** What the writer writes with: Switchboard's own registry, sink settings and removal hooks on its store. */
export interface ImportStore {
  db: Db;
  registry: InstanceRegistry;
  sinks: SinkConfigs;
  removal: InstanceRemoval;
  /** The instances' proxies (it seals the password as proxy/set does). */
  proxies: ProxyStore;
}

/** History rows per insert statement (well under SQLite's and PostgreSQL's parameter limits). */
const rowsPerInsert = 200;

async function insertChunks<T extends 'messages' | 'message_status' | 'chats' | 'contacts' | 'labels'>(
  unit: Unit,
  table: T,
  rows: Insertable<Database[T]>[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += rowsPerInsert) {
    // The tables' own column sets; Kysely types each call by the table named.
    await unit.tx
      .insertInto(table)
      .values(rows.slice(i, i + rowsPerInsert) as never)
      .execute();
  }
}

export async function writeInstance(
  store: ImportStore,
  plan: InstancePlan,
  apikey: string,
  session: EvolutionSession | null,
  history: HistoryRows | null,
  replacing: Instance | undefined,
): Promise<void> {
  const { registry, sinks } = store;
  await inUnit(store.db, async (unit) => {
    if (replacing) {
      await store.removal.run(unit, replacing);
      await registry.remove(unit, replacing);
    }
    // Not connected yet (status close): it connects, as the same linked device, when the service starts it.
    const instance = await registry.insert(unit, {
      id: plan.id,
      name: plan.name,
      integration: plan.integration,
      apikey,
      number: plan.number,
      businessId: plan.businessId,
      providerToken: plan.providerToken,
      settings: plan.settings,
      linkedAccount: plan.profile,
    });
    for (const sink of plan.sinks) await sinks.set(unit, instance.id, sink.kind, sink.config);
    if (plan.proxy) await store.proxies.set(unit, instance.id, plan.proxy.enabled ? plan.proxy.settings : null);
    if (session?.linked) {
      const keys = session.keys.map((key) => ({ type: key.type, id: key.id, value: storedKeyValue(key.value) }));
      await storeNewSession(unit, instance.id, sessionRecordOf(session.creds), keys);
    }
    if (history) {
      await insertChunks(unit, 'messages', history.messages);
      await insertChunks(unit, 'message_status', history.statuses);
      await insertChunks(unit, 'chats', history.chats);
      await insertChunks(unit, 'contacts', history.contacts);
      await insertChunks(unit, 'labels', history.labels);
    }
  });
  // The replaced instance is forgotten after the commit, and with it the entries it shared with the new one (its name,
  // perhaps its id and key): the registry is read again (replacing is the rare path).
  if (replacing) await registry.load();
}
