// What the events feature keeps of an instance, deleted with it (registered as instance removal hooks).
import type { Instance } from '../core/instance.js';
import type { Unit } from '../platform/store/unit.js';

/** Its event destinations (webhook, websocket, broker settings). */
export async function removeSinkSettingsOf(unit: Unit, instance: Instance): Promise<void> {
  await unit.tx.deleteFrom('event_sinks').where('instance_id', '=', instance.id).execute();
}

/** Its delivery log and event log, except what is still owed to someone. */
export async function removeEventLogOf(unit: Unit, instance: Instance): Promise<void> {
  const id = instance.id;
  const tx = unit.tx;
  // Deliveries still owed to the instance's webhook stay (they carry its settings: `keepPendingDeliveries`).
  await tx.deleteFrom('deliveries').where('instance_id', '=', id).where('target', '=', 'instance').where('state', '!=', 'pending').execute();
  // The instance's event log goes too, except events still owed to the global webhook or not yet relayed to a broker.
  const relayed = await tx
    .selectFrom('broker_cursors')
    .select((eb) => eb.fn.min('last_seq').as('seq'))
    .executeTakeFirst();
  let purge = tx
    .deleteFrom('outbox')
    .where('instance_id', '=', id)
    .where('id', 'not in', tx.selectFrom('deliveries').select('event_id').where('instance_id', '=', id));
  if (relayed?.seq !== null && relayed?.seq !== undefined) purge = purge.where('seq', '<=', Number(relayed.seq));
  await purge.execute();
}
