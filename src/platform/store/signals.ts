// Signals between the nodes of one store: PostgreSQL LISTEN/NOTIFY (every node hears them), in-process on SQLite.
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './schema.js';

/** A unit of work as signals need it: its transaction, and hooks run after it commits. */
export interface SignalUnit {
  tx: Transaction<Database>;
  afterCommit(hook: () => void): void;
}

/**
 * A signal's listener; the payload is short text (PostgreSQL allows under 8000 bytes). `fromThisNode`: this node sent
 * it (over one of its own store connections).
 */
export type SignalListener = (payload: string, fromThisNode: boolean) => void;

/**
 * Wake-ups and changes told to every node sharing the store. A signal is a hint, never the data: a listener reads the
 * store. Signals can be missed (a lost connection): `onResync` listeners then re-read whatever they keep.
 */
export interface StoreSignals {
  /** Sends now (outside any transaction). */
  send(channel: string, payload: string): Promise<void>;
  /** Sends when the transaction commits, never if it rolls back. */
  sendIn(unit: SignalUnit, channel: string, payload: string): Promise<void>;
  /** Sends one signal for each payload when the transaction commits (one statement for all on PostgreSQL). */
  sendEachIn(unit: SignalUnit, channel: string, payloads: readonly string[]): Promise<void>;
  /** Listens on a channel (this node's own signals included); answers how to stop. */
  listen(channel: string, listener: SignalListener): () => void;
  /** Told after signals may have been missed (the listening connection was lost and is back). */
  onResync(listener: () => void): void;
  close(): Promise<void>;
}

/** One process: signals are events of this process. */
export class LocalSignals implements StoreSignals {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  async send(channel: string, payload: string): Promise<void> {
    queueMicrotask(() => this.emitter.emit(channel, payload, true));
  }

  async sendIn(unit: SignalUnit, channel: string, payload: string): Promise<void> {
    unit.afterCommit(() => this.emitter.emit(channel, payload, true));
  }

  async sendEachIn(unit: SignalUnit, channel: string, payloads: readonly string[]): Promise<void> {
    for (const payload of payloads) await this.sendIn(unit, channel, payload);
  }

  listen(channel: string, listener: SignalListener): () => void {
    this.emitter.on(channel, listener);
    return () => this.emitter.off(channel, listener);
  }

  onResync(): void {
    // Nothing is ever missed in one process.
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

export interface PostgresSignalsOptions {
  db: Kysely<Database>;
  /** Connects the listening client (a connection of its own, outside the pool). */
  connect: () => pg.Client;
  /** Channels are named after the schema: stores in other schemas of the same database hear nothing of ours. */
  schema: string;
  onError?: (error: unknown) => void;
  /** Whether the server process of this id serves one of this node's own connections (its signals are its own). */
  isOwnBackend?: (processId: number) => boolean;
}

const reconnectMs = { first: 200, max: 5_000 };

/** PostgreSQL: NOTIFY through the pool (or the transaction), LISTEN on a connection of its own that comes back. */
export class PostgresSignals implements StoreSignals {
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  private readonly resync: (() => void)[] = [];
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private retryMs = reconnectMs.first;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Channels the current client listens on. */
  private listened = new Set<string>();
  /** Channels waiting for their LISTEN on the current client. */
  private readonly unlistened = new Set<string>();
  /** Whether LISTEN statements are under way (pg wants one query at a time on a client). */
  private draining = false;

  constructor(private readonly options: PostgresSignalsOptions) {}

  private wire(channel: string): string {
    return `${this.options.schema}.${channel}`;
  }

  async send(channel: string, payload: string): Promise<void> {
    await sql`select pg_notify(${this.wire(channel)}, ${payload})`.execute(this.options.db);
  }

  async sendIn(unit: SignalUnit, channel: string, payload: string): Promise<void> {
    await sql`select pg_notify(${this.wire(channel)}, ${payload})`.execute(unit.tx);
  }

  async sendEachIn(unit: SignalUnit, channel: string, payloads: readonly string[]): Promise<void> {
    if (payloads.length === 0) return;
    await sql`select pg_notify(${this.wire(channel)}, p) from unnest(${[...payloads]}::text[]) as p`.execute(unit.tx);
  }

  listen(channel: string, listener: SignalListener): () => void {
    const fresh = this.emitter.listenerCount(channel) === 0;
    this.emitter.on(channel, listener);
    if (fresh) void this.ensureListening(channel);
    return () => this.emitter.off(channel, listener);
  }

  onResync(listener: () => void): void {
    this.resync.push(listener);
  }

  /** Connects when needed; LISTENs on the channel (or on all of them after a reconnect). */
  private async ensureListening(channel?: string): Promise<void> {
    if (this.closed) return;
    if (!this.client) {
      this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
      await this.connecting;
      // connect() listens on the channels known when it began listening: one added meanwhile is listened to here.
      // Not connected: the reconnect listens on every channel.
      if (!this.client) return;
    }
    if (channel && !this.listened.has(channel)) {
      this.unlistened.add(channel);
      if (!this.draining) void this.drain();
    }
  }

  /**
   * LISTENs on the waiting channels one statement at a time, in order; the channels that arrive while one runs go
   * together in the next (one round trip), so none waits for more than the statement under way.
   */
  private async drain(): Promise<void> {
    this.draining = true;
    try {
      for (let client = this.client; client && this.unlistened.size > 0; client = this.client) {
        const channels = [...this.unlistened].filter((channel) => !this.listened.has(channel));
        this.unlistened.clear();
        if (channels.length === 0) continue;
        try {
          await client.query(this.listenStatement(channels));
        } catch (error) {
          this.lost(error, client);
          continue;
        }
        if (client === this.client) for (const channel of channels) this.listened.add(channel);
      }
    } finally {
      this.draining = false;
    }
  }

  /** LISTEN on each of the channels, in one query. */
  private listenStatement(channels: readonly string[]): string {
    return channels.map((channel) => `listen "${this.wire(channel)}"`).join('; ');
  }

  private async connect(): Promise<void> {
    const client = this.options.connect();
    client.on('notification', (message) => {
      const prefix = `${this.options.schema}.`;
      if (!message.channel.startsWith(prefix)) return;
      this.emitter.emit(message.channel.slice(prefix.length), message.payload ?? '', this.options.isOwnBackend?.(message.processId) === true);
    });
    client.on('error', (error) => this.lost(error, client));
    client.on('end', () => this.lost(new Error('listening connection ended'), client));
    let channels: string[] = [];
    try {
      await client.connect();
      channels = this.emitter.eventNames().map(String);
      if (channels.length > 0) await client.query(this.listenStatement(channels));
    } catch (error) {
      this.lost(error, client);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    const reconnected = this.retryMs !== reconnectMs.first;
    this.client = client;
    this.listened = new Set(channels);
    this.retryMs = reconnectMs.first;
    if (reconnected) for (const listener of this.resync) listener();
  }

  /** The listening connection failed: reconnect with growing waits, then tell the resync listeners. */
  private lost(error: unknown, client = this.client): void {
    if (this.closed || (this.client && client !== this.client)) return;
    this.options.onError?.(error);
    this.client = undefined;
    client?.removeAllListeners('end');
    void client?.end().catch(() => undefined);
    if (this.retryTimer) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, reconnectMs.max);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.ensureListening();
    }, wait);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    this.emitter.removeAllListeners();
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }
}
