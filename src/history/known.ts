// The chats and contacts each instance has stored, known in memory: whether a message starts a chat or a contact.
import type { Db } from '../platform/store/types.js';

/** One instance's stored chats and its contacts' push names. */
export interface KnownAddresses {
  chats: Set<string>;
  contacts: Map<string, string | null>;
}

/**
 * Loaded from the store once per instance (two reads, on its first message), then kept as its messages are stored,
 * so a message costs no read to know whether it starts a chat (`chats.upsert`) or a contact (`contacts.upsert`).
 * Memory grows with the addresses an instance has; one process writes an instance's messages.
 */
export class KnownAddressBook {
  private readonly byInstance = new Map<string, KnownAddresses>();
  private readonly loading = new Map<string, Promise<void>>();

  constructor(private readonly db: Db) {}

  /** Undefined when the instance's addresses are known; else resolves once they are. */
  ready(instanceId: string): Promise<void> | undefined {
    if (this.byInstance.has(instanceId)) return undefined;
    let loading = this.loading.get(instanceId);
    if (!loading) {
      loading = this.load(instanceId).finally(() => this.loading.delete(instanceId));
      this.loading.set(instanceId, loading);
    }
    return loading;
  }

  /** The instance's known addresses (`ready` first). */
  of(instanceId: string): KnownAddresses | undefined {
    return this.byInstance.get(instanceId);
  }

  /** Forgets an instance (deleted). */
  forget(instanceId: string): void {
    this.byInstance.delete(instanceId);
  }

  private async load(instanceId: string): Promise<void> {
    const [chats, contacts] = await Promise.all([
      this.db.selectFrom('chats').select('remote_jid').where('instance_id', '=', instanceId).execute(),
      this.db.selectFrom('contacts').select(['remote_jid', 'push_name']).where('instance_id', '=', instanceId).execute(),
    ]);
    this.byInstance.set(instanceId, {
      chats: new Set(chats.map((row) => row.remote_jid)),
      contacts: new Map(contacts.map((row) => [row.remote_jid, row.push_name])),
    });
  }
}
