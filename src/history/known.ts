// The chats and contacts each instance has stored, known in memory: whether a message starts a chat or a contact.
import { BatchedSignal, maxBatchPayloadChars } from '../platform/store/batched-signal.js';
import type { Db } from '../platform/store/types.js';
import type { StoreSignals } from '../platform/store/signals.js';

/** One instance's stored chats and its contacts' push names. */
export interface KnownAddresses {
  chats: Set<string>;
  contacts: Map<string, string | null>;
}

/** Addresses one node stored for one instance (a signal's `books` hold these): its new chats, its contacts' push names. */
type SharedBook = [instanceId: string, chats: string[], contacts: [jid: string, pushName: string | null][]];

/** What a node gathers of one instance before telling the others. */
interface OutgoingAddresses {
  chats: Set<string>;
  contacts: Map<string, string | null>;
}

/**
 * Loaded from the store once per instance (two reads, on its first message), then kept as its messages are stored,
 * so a message costs no read to know whether it starts a chat (`chats.upsert`) or a contact (`contacts.upsert`).
 * Memory grows with the addresses an instance has. In a fleet, any node may store an instance's messages (sends are
 * accepted anywhere): the addresses a node stores are told to the other nodes' books (one signal per burst), so a chat
 * is announced once, not once per node.
 */
export class KnownAddressBook {
  private readonly byInstance = new Map<string, KnownAddresses>();
  private readonly loading = new Map<string, Promise<void>>();
  /** Addresses stored here, told to the other nodes' books (one signal per burst). */
  private readonly outgoing: BatchedSignal<OutgoingAddresses, SharedBook>;

  constructor(
    private readonly db: Db,
    /** Where the other nodes' books hear of addresses stored here; none: this node is the only one (SQLite). */
    signals?: StoreSignals,
  ) {
    this.outgoing = new BatchedSignal({
      signals,
      channel: 'known-addresses',
      field: 'books',
      entry: () => ({ chats: new Set(), contacts: new Map() }),
      pack: (entries) => this.pack(entries),
      heard: (books) => this.heard(books),
      onError: () => undefined, // A hint: a lost one costs a repeated announcement.
    });
  }

  /** A chat stored by this node (committed): known here, and told to the other nodes. */
  chatStored(instanceId: string, jid: string): void {
    this.byInstance.get(instanceId)?.chats.add(jid);
    this.share(instanceId, jid, undefined);
  }

  /** Tells the other nodes, after the unit committed, of a chat or a contact this node keeps (its book has it already). */
  share(instanceId: string, chat: string | undefined, contact: [jid: string, pushName: string | null] | undefined): void {
    this.outgoing.gather(instanceId, (entry) => {
      if (chat) entry.chats.add(chat);
      if (contact) entry.contacts.set(contact[0], contact[1]);
    });
  }

  /** The live nodes as the last heartbeat found them (this one included). */
  liveNodes(count: number): void {
    this.outgoing.liveNodes(count);
  }

  stop(): void {
    this.outgoing.stop();
  }

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

  /** A batch's addresses as the books of each signal, an instance's split over several signals when they are many. */
  private pack(outgoing: Map<string, OutgoingAddresses>): SharedBook[][] {
    const signals: SharedBook[][] = [];
    let books: SharedBook[] = [];
    let size = 0;
    const endSignal = () => {
      signals.push(books);
      books = [];
      size = 0;
    };
    for (const [instanceId, entry] of outgoing) {
      let book: SharedBook = [instanceId, [], []];
      books.push(book);
      const addresses: ([string, undefined] | [string, string | null])[] = [
        ...[...entry.chats].map((jid): [string, undefined] => [jid, undefined]),
        ...entry.contacts,
      ];
      for (const [jid, pushName] of addresses) {
        const itemSize = jid.length + (pushName?.length ?? 4) + 8;
        if (size + itemSize > maxBatchPayloadChars) {
          endSignal();
          book = [instanceId, [], []];
          books.push(book);
        }
        if (pushName === undefined) book[1].push(jid);
        else book[2].push([jid, pushName]);
        size += itemSize;
      }
    }
    if (books.length > 0) endSignal();
    return signals;
  }

  /** Another node stored addresses: a book loaded here takes them (one being loaded, once loaded). */
  private heard(books: SharedBook[]): void {
    for (const [instanceId, chats, contacts] of books) {
      const apply = () => {
        const book = this.byInstance.get(instanceId);
        if (!book) return;
        for (const jid of chats) book.chats.add(jid);
        for (const [jid, pushName] of contacts) if (pushName !== null || !book.contacts.has(jid)) book.contacts.set(jid, pushName);
      };
      const loading = this.loading.get(instanceId);
      if (loading) void loading.then(apply, () => undefined);
      else apply();
    }
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
