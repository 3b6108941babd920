// Which node holds an instance's live connection: read from instance_owners and nodes, one indexed query per ask.
import type { Db } from '../store/db.js';

/** The live owner of an instance: its incarnation, where it listens, and whether it is this node. */
export interface LiveOwner {
  incarnation: string;
  /** NODE_ADDRESS of the owner (a base URL); null on a row written before addresses were stored. */
  address: string | null;
  self: boolean;
}

/**
 * Where an instance lives: a live owner; `unassigned` when no node was ever given it (a one-node store, or before
 * ownership existed: this node serves it); `moving` while no live node holds it (its owner died or is handing over).
 */
export type OwnerAnswer = LiveOwner | 'unassigned' | 'moving';

export interface OwnerDirectoryOptions {
  db: Db;
  /** This node's incarnation. */
  self: string;
  /** NODE_DEAD_AFTER_MS: an owner whose heartbeat is older than this is not alive. */
  deadAfterMs: number;
  /** Whether this node holds the instance now (in memory): then it is the owner, and no query is needed. */
  heldHere?: (instanceId: string) => boolean;
  now?: () => number;
}

export class OwnerDirectory {
  /** Asks under way, by instance: concurrent asks for one instance share one query (never an older answer). */
  private readonly asking = new Map<string, Promise<OwnerAnswer>>();

  constructor(private readonly options: OwnerDirectoryOptions) {}

  ownerOf(instanceId: string): Promise<OwnerAnswer> {
    // The common case of a node answering for its own instances costs nothing (a lost lease is refused by the fence).
    if (this.options.heldHere?.(instanceId)) return Promise.resolve({ incarnation: this.options.self, address: null, self: true });
    const running = this.asking.get(instanceId);
    if (running) return running;
    const ask = this.read(instanceId).finally(() => this.asking.delete(instanceId));
    this.asking.set(instanceId, ask);
    return ask;
  }

  private async read(instanceId: string): Promise<OwnerAnswer> {
    const { db, self, deadAfterMs } = this.options;
    const row = await db
      .selectFrom('instance_owners')
      .leftJoin('nodes', 'nodes.incarnation', 'instance_owners.owner')
      .select(['instance_owners.owner', 'nodes.address', 'nodes.heartbeat_at', 'nodes.stopped_at'])
      .where('instance_owners.instance_id', '=', instanceId)
      .executeTakeFirst();
    if (!row) return 'unassigned';
    if (row.owner === null) return 'moving';
    if (row.owner === self) return { incarnation: self, address: row.address, self: true };
    const now = (this.options.now ?? Date.now)();
    const alive = row.heartbeat_at !== null && row.stopped_at === null && Number(row.heartbeat_at) >= now - deadAfterMs;
    if (!alive) return 'moving';
    return { incarnation: row.owner, address: row.address, self: false };
  }
}
