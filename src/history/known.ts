// The chats and contacts each instance has stored, known in memory: whether a message starts a chat or a contact.
import { randomUUID } from 'node:crypto';
import type { Db } from '../platform/store/types.js';
import type { StoreSignals } from '../platform/store/signals.js';

/** One instance's stored chats and its contacts' push names. */
export interface KnownAddresses {
  chats: Set<string>;
  contacts: Map<string, string | null>;
}

/** The signal channel of addresses stored; the payload is a `SharedAddresses`. */
const channel = 'known-addresses';
/** PostgreSQL takes payloads under 8000 bytes: more addresses go as several signals. */
const maxPayloadChars = 7_000;

/** Addresses one node stored, per instance: its new chats, and its contacts with their push names. */
interface SharedAddresses {
  from: string;
  books: [instanceId: string, chats: string[], contacts: [jid: string, pushName: string | null][]][];
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
  private readonly origin = randomUUID();
  private readonly outgoing = new Map<string, { chats: Set<string>; contacts: Map<string, string | null> }>();
  private flushing = false;
  /** Whether other nodes may be alive (until a heartbeat says this node is alone). */
  private others = true;
  private unlisten: (() => void) | undefined;

  constructor(
    private readonly db: Db,
    /** Where the other nodes' books hear of addresses stored here; none: this node is the only one (SQLite). */
    private readonly signals?: StoreSignals,
  ) {
    this.unlisten = signals?.listen(channel, (payload) => this.heard(payload));
  }

  /** A chat stored by this node (committed): known here, and told to the other nodes. */
  chatStored(instanceId: string, jid: string): void {
    this.byInstance.get(instanceId)?.chats.add(jid);
    this.share(instanceId, jid, undefined);
  }

  /** Tells the other nodes, after the unit committed, of a chat or a contact this node keeps (its book has it already). */
  share(instanceId: string, chat: string | undefined, contact: [jid: string, pushName: string | null] | undefined): void {
    if (!this.signals || !this.others) return;
    let entry = this.outgoing.get(instanceId);
    if (!entry) {
      entry = { chats: new Set(), contacts: new Map() };
      this.outgoing.set(instanceId, entry);
    }
    if (chat) entry.chats.add(chat);
    if (contact) entry.contacts.set(contact[0], contact[1]);
    if (this.flushing) return;
    this.flushing = true;
    // A committed batch's hooks run one after the other: its addresses go in one signal.
    queueMicrotask(() => this.flush());
  }

  /** The live nodes as the last heartbeat found them (this one included). */
  liveNodes(count: number): void {
    this.others = count > 1;
  }

  stop(): void {
    this.unlisten?.();
    this.unlisten = undefined;
    this.outgoing.clear();
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

  private flush(): void {
    this.flushing = false;
    const signals = this.signals;
    if (!signals) return;
    let books: SharedAddresses['books'] = [];
    let size = 0;
    const send = () => {
      const payload: SharedAddresses = { from: this.origin, books };
      signals.send(channel, JSON.stringify(payload)).catch(() => undefined); // A hint: a lost one costs a repeated announcement.
      books = [];
      size = 0;
    };
    for (const [instanceId, entry] of this.outgoing) {
      let book: SharedAddresses['books'][number] = [instanceId, [], []];
      books.push(book);
      const addresses: ([string, undefined] | [string, string | null])[] = [
        ...[...entry.chats].map((jid): [string, undefined] => [jid, undefined]),
        ...entry.contacts,
      ];
      for (const [jid, pushName] of addresses) {
        const itemSize = jid.length + (pushName?.length ?? 4) + 8;
        if (size + itemSize > maxPayloadChars) {
          send();
          book = [instanceId, [], []];
          books.push(book);
        }
        if (pushName === undefined) book[1].push(jid);
        else book[2].push([jid, pushName]);
        size += itemSize;
      }
    }
    this.outgoing.clear();
    if (books.length > 0) send();
  }

  /** Another node stored addresses: a book loaded here takes them (one being loaded, once loaded). */
  private heard(payload: string): void {
    let shared: SharedAddresses;
    try {
      shared = JSON.parse(payload) as SharedAddresses;
    } catch {
      return;
    }
    if (shared.from === this.origin || !Array.isArray(shared.books)) return;
    for (const [instanceId, chats, contacts] of shared.books) {
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
