// What the history store keeps of an instance, deleted with it (an instance removal hook).
import type { Instance } from '../core/instance.js';
import type { Unit } from '../platform/store/unit.js';
import type { KnownAddressBook } from './known.js';

/** Its chats, contacts and labels, and what is known of them in memory (once the deletion is committed). */
export function removeHistoryOf(known: KnownAddressBook) {
  return async (unit: Unit, instance: Instance): Promise<void> => {
    await unit.tx.deleteFrom('chats').where('instance_id', '=', instance.id).execute();
    await unit.tx.deleteFrom('contacts').where('instance_id', '=', instance.id).execute();
    await unit.tx.deleteFrom('labels').where('instance_id', '=', instance.id).execute();
    unit.afterCommit(() => known.forget(instance.id));
  };
}
