// Which instances this node owns: a lease per instance in `instance_owners`, claimed up to a fair share of the live
// nodes, handed over gracefully, given up at once when lost (self-fencing), and the fence every owned write passes.
import type { Logger } from '../platform/logger.js';
import type { Db, Dialect, Tx } from '../platform/store/types.js';
import type { StoreSignals } from '../platform/store/signals.js';
import type { WriteUnit } from '../platform/store/write-unit.js';
import type { Unit } from '../platform/store/unit.js';
import type { NodeRegistry } from '../platform/cluster/node-registry.js';
import { liveIncarnations } from '../platform/cluster/node-queries.js';
import { InstanceFencedError, type OwnershipFence } from '../platform/cluster/ownership-fence.js';
import {
  assertionFailedCode,
  claimFree,
  insertOwned,
  insertMissingOwners,
  ownedBy,
  ownerCounts,
  ownersForWrite,
  ownershipAssertion,
  release,
  releaseAll,
  type OwnedRow,
} from './owner-queries.js';

/** What the lifecycle does with instances this node gains and gives up. */
export interface OwnedInstances {
  /** This node now owns these instances: their connectors are attached and started as at a start. */
  acquired(instanceIds: readonly string[]): Promise<void>;
  /** This node gives the instance up: its connector stops and is forgotten here, its sends pause. */
  stopLocally(instanceId: string): Promise<void>;
}

export interface OwnershipDeps {
  db: Db;
  dialect: Dialect;
  signals: StoreSignals;
  logger: Logger;
  nodes: Pick<NodeRegistry, 'incarnation' | 'lastBeatAt' | 'retired' | 'onLiveNodes'>;
  heartbeatMs: number;
  deadAfterMs: number;
  /** The instance's name for logs. */
  nameOf(instanceId: string): string | undefined;
}

/** The signal channel on which nodes tell each other that instances became free. */
const ownersChannel = 'owners';
/** Signals coming close together lead to one look. */
const debounceMs = 25;
/** A node over its share hands over this many instances per look at least (a twentieth of its share if more). */
const handOverAtLeast = 10;
/** The generation of an instance's first owner, its creator. */
const firstGeneration = 1;

export class InstanceOwnership implements OwnershipFence {
  /** The instances this node owns, with the generation it acquired each under. */
  private readonly held = new Map<string, number>();
  /** When each held instance was taken on (created here or claimed). */
  private readonly heldSince = new Map<string, number>();
  private holder: OwnedInstances | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private active = false;
  private debounce: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private unlisten: (() => void) | undefined;
  private selfFenced = false;
  /** Looking paused by `pause` (until `resume`). */
  private paused = false;
  /** Instances being created here: their rows name this node before the creation commits. */
  private readonly creating = new Set<string>();
  private readonly logger: Logger;

  constructor(private readonly deps: OwnershipDeps) {
    this.logger = deps.logger.child({ component: 'ownership' });
  }

  private get incarnation(): string {
    return this.deps.nodes.incarnation;
  }

  /** Who acts on gains and losses (the lifecycle). */
  bind(holder: OwnedInstances): void {
    this.holder = holder;
  }

  ownsLocally(instanceId: string): boolean {
    return this.held.has(instanceId);
  }

  ownedCount(): number {
    return this.held.size;
  }

  /** Takes this node's share now, then looks again after every heartbeat and whenever another node frees instances. */
  async start(): Promise<void> {
    this.active = true;
    this.deps.nodes.onLiveNodes(async () => this.schedule(0));
    this.unlisten = this.deps.signals.listen(ownersChannel, (from) => {
      if (from !== this.incarnation) this.schedule(debounceMs);
    });
    this.deps.signals.onResync(() => this.schedule(debounceMs));
    this.watchdog = setInterval(() => this.checkLease(), Math.max(50, Math.floor(this.deps.heartbeatMs / 2)));
    this.watchdog.unref();
    await this.rebalance();
  }

  /** Stops looking (a stop): no more claims or handovers; what is owned stays owned until `releaseAll`. */
  async halt(): Promise<void> {
    this.active = false;
    clearTimeout(this.debounce);
    clearInterval(this.watchdog);
    this.unlisten?.();
    await this.running;
  }

  /**
   * Stops looking until `resume` (operators, tests): no claims and no handovers meanwhile; what this node owns stays
   * owned, and the watchdog still stops it all if the heartbeat is lost. Answers once a look under way has ended.
   */
  async pause(): Promise<void> {
    this.paused = true;
    await this.running;
  }

  /** Looks again: at once, then after every heartbeat and signal as before `pause`. */
  resume(): Promise<void> {
    this.paused = false;
    return this.rebalance();
  }

  /** A clean stop, after the connectors stopped: every instance of this node freed, and the other nodes told. */
  async releaseAll(): Promise<void> {
    this.held.clear();
    this.heldSince.clear();
    try {
      const released = await releaseAll(this.deps.db, this.incarnation, Date.now());
      if (released > 0) await this.deps.signals.send(ownersChannel, this.incarnation);
      this.logger.info({ released }, 'instances handed over at stop');
    } catch (error) {
      this.logger.warn({ err: error }, 'instances not released at stop; the other nodes take them once this node is seen dead');
    }
  }

  /**
   * A newly created instance, owned by this node from its creation's unit on (so it connects here at once, until a
   * rebalance moves it): its row is inserted owned here, and counts as held once the unit commits.
   */
  async claimIn(unit: Unit, instanceId: string): Promise<void> {
    this.creating.add(instanceId);
    unit.onRollback(() => this.creating.delete(instanceId));
    unit.afterCommit(() => {
      this.creating.delete(instanceId);
      this.held.set(instanceId, firstGeneration);
      this.heldSince.set(instanceId, Date.now());
    });
    await insertOwned(unit.tx, this.incarnation, instanceId, firstGeneration, Date.now());
  }

  /** A deleted instance: nothing more to own (its row goes with its removal hooks). */
  forget(instanceId: string): void {
    this.held.delete(instanceId);
  }

  private schedule(delayMs: number): void {
    if (!this.active || this.debounce) return;
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      void this.rebalance();
    }, delayMs);
    this.debounce.unref();
  }

  /** One look at the owner rows (never two at once; a look asked for meanwhile runs right after). Never throws. */
  rebalance(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          const claimed = await this.look();
          if (claimed.length > 0) await this.holder?.acquired(claimed);
        } catch (error) {
          this.logger.warn({ err: error }, 'instance ownership look failed; trying again at the next heartbeat');
        }
      } while (this.again && this.active);
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  /** The lease is lost when the heartbeat is too old to be trusted, or another process marked this node stopped. */
  private leaseLost(): boolean {
    const { nodes, deadAfterMs, heartbeatMs } = this.deps;
    // One heartbeat before the others may see it dead (half the dead time if heartbeats are that long).
    return nodes.retired || Date.now() - nodes.lastBeatAt > Math.max(deadAfterMs - heartbeatMs, deadAfterMs / 2);
  }

  /** The watchdog: a node whose heartbeat failed for nearly the dead time stops what it owns before others take it. */
  private checkLease(): void {
    if (!this.leaseLost()) {
      if (this.selfFenced) this.logger.info('heartbeat written again; this node takes its share again');
      this.selfFenced = false;
      return;
    }
    if (this.selfFenced && this.held.size === 0) return;
    this.selfFenced = true;
    this.logger.warn({ owned: this.held.size }, 'heartbeat lost for too long: every instance of this node is stopped here (other nodes take them over)');
    for (const instanceId of [...this.held.keys()]) this.drop(instanceId);
  }

  /** Answers the instances claimed, to start. */
  private async look(): Promise<string[]> {
    if (!this.active || this.paused) return [];
    if (this.leaseLost()) {
      this.checkLease();
      return [];
    }
    const { db, dialect, deadAfterMs } = this.deps;
    const now = Date.now();
    await insertMissingOwners(db, now);
    // What the store says this node owns: anything held under another generation (or not at all) was lost.
    // (Only what was held before the read: an instance created meanwhile is held since, and rightly not read.)
    const heldBefore = [...this.held];
    const stored = new Map((await ownedBy(db, this.incarnation)).map((row) => [row.instanceId, row.generation]));
    for (const [instanceId, generation] of heldBefore) {
      if (stored.get(instanceId) !== generation && this.held.get(instanceId) === generation) {
        this.logger.warn({ instance: this.deps.nameOf(instanceId) ?? instanceId }, 'instance taken over by another node: stopped here');
        this.drop(instanceId);
      }
    }
    // Rows naming this node that it does not hold (it let them go locally): freed under a new generation.
    const strays: OwnedRow[] = [];
    for (const [instanceId, generation] of stored)
      if (this.held.get(instanceId) !== generation && !this.creating.has(instanceId)) strays.push({ instanceId, generation });
    if (strays.length > 0) await release(db, this.incarnation, strays, now);

    const counts = await ownerCounts(db);
    let total = 0;
    for (const count of counts.values()) total += count;
    const live = await liveIncarnations(db, now - deadAfterMs);
    const share = Math.ceil(total / Math.max(1, live.length + (live.includes(this.incarnation) ? 0 : 1)));
    // What this node and the store agree it owns (an instance created since the read is counted at the next look).
    const agreed = [...this.held].filter(([instanceId, generation]) => stored.get(instanceId) === generation);
    const mine = agreed.length;
    if (mine < share) {
      const claimed = await claimFree(db, dialect, this.incarnation, now - deadAfterMs, share - mine, now);
      for (const row of claimed) {
        this.held.set(row.instanceId, row.generation);
        this.heldSince.set(row.instanceId, now);
      }
      if (claimed.length > 0) this.logger.info({ claimed: claimed.length, owned: this.held.size, share }, 'instances taken on');
      return claimed.map((row) => row.instanceId);
    }
    const others = live.filter((incarnation) => incarnation !== this.incarnation).length;
    if (mine > share && others > 0) {
      // The longest held go first; one taken on less than a dead time ago (created and linking now, say) stays for now.
      const settled = agreed.filter(([instanceId]) => now - (this.heldSince.get(instanceId) ?? 0) >= deadAfterMs);
      const count = Math.min(mine - share, Math.max(handOverAtLeast, Math.ceil(share / 20)));
      if (settled.length > 0) await this.handOver(settled.slice(0, count));
    }
    return [];
  }

  /** Gives these instances to the other nodes: each stopped here first, then freed, then the others told. */
  private async handOver(extras: readonly [string, number][]): Promise<void> {
    const given: OwnedRow[] = extras.map(([instanceId, generation]) => ({ instanceId, generation }));
    for (const row of given) await this.holder?.stopLocally(row.instanceId);
    for (const row of given) {
      this.held.delete(row.instanceId);
      this.heldSince.delete(row.instanceId);
    }
    const released = await release(this.deps.db, this.incarnation, given, Date.now());
    this.logger.info({ handedOver: released.length, owned: this.held.size }, 'instances handed over to less busy nodes');
    if (released.length > 0) await this.deps.signals.send(ownersChannel, this.incarnation);
  }

  /** Forgets the instance here and stops it locally at once (nothing is written for it any more). */
  private drop(instanceId: string): void {
    if (!this.held.delete(instanceId)) return;
    void this.holder
      ?.stopLocally(instanceId)
      .catch((error: unknown) => this.logger.warn({ err: error, instance: this.deps.nameOf(instanceId) ?? instanceId }, 'instance did not stop cleanly'));
  }

  /** A refused write: the instance is stopped here (once), and the refusal is the typed error. */
  private refuse(instanceId: string, reason: string): InstanceFencedError {
    if (this.held.has(instanceId)) {
      this.logger.warn({ instance: this.deps.nameOf(instanceId) ?? instanceId, reason }, 'write refused: this node no longer owns the instance; stopped here');
      this.drop(instanceId);
    }
    return new InstanceFencedError(instanceId, reason);
  }

  check(tx: Tx, instanceId: string): Promise<void> {
    return this.checkMany(tx, [instanceId]);
  }

  async checkMany(tx: Tx, instanceIds: readonly string[]): Promise<void> {
    for (const instanceId of instanceIds) if (!this.held.has(instanceId)) throw this.refuse(instanceId, 'not owned by this node');
    // SQLite: one node only (the store is locked to one process), so what it holds is what it owns.
    if (this.deps.dialect !== 'postgres') return;
    const rows = await ownersForWrite(tx, this.deps.dialect, instanceIds);
    for (const instanceId of instanceIds) {
      const row = rows.get(instanceId);
      if (!row) throw this.refuse(instanceId, 'its owner row is gone');
      if (row.owner !== this.incarnation || row.generation !== this.held.get(instanceId)) throw this.refuse(instanceId, 'taken over by another node');
    }
  }

  guard(unit: WriteUnit, instanceId: string): void {
    const generation = this.held.get(instanceId);
    if (generation === undefined) throw this.refuse(instanceId, 'not owned by this node');
    if (this.deps.dialect === 'postgres') unit.write(ownershipAssertion(this.deps.db, this.incarnation, instanceId, generation));
  }

  refusal(error: unknown, instanceId: string): unknown {
    if (error instanceof InstanceFencedError) return error;
    if ((error as { code?: unknown } | null)?.code === assertionFailedCode) return this.refuse(instanceId, 'taken over by another node');
    return error;
  }
}
