// The people an instance has exchanged messages with: the audience of a status posted to "all contacts".
import type { Db } from '../platform/store/types.js';

/** Every person (not group) address the instance has a message with, each once. */
export async function chatPartnersOf(db: Db, instanceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('messages')
    .select('remote_jid')
    .distinct()
    .where('instance_id', '=', instanceId)
    .where('remote_jid', 'like', '%@s.whatsapp.net')
    .execute();
  return rows.map((r) => r.remote_jid);
}
