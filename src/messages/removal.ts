// What the messages feature keeps of an instance, deleted with it (registered as instance removal hooks).
import type { Instance } from '../core/instance.js';
import type { Unit } from '../platform/store/unit.js';

/** Its send queue, status history and messages. */
export async function removeMessagesOf(unit: Unit, instance: Instance): Promise<void> {
  const tx = unit.tx;
  await tx.deleteFrom('send_queue').where('instance_id', '=', instance.id).execute();
  await tx.deleteFrom('message_status').where('instance_id', '=', instance.id).execute();
  await tx.deleteFrom('messages').where('instance_id', '=', instance.id).execute();
}

/** The media kept for its sends. */
export async function removeMediaBlobsOf(unit: Unit, instance: Instance): Promise<void> {
  await unit.tx.deleteFrom('media_blobs').where('instance_id', '=', instance.id).execute();
}
