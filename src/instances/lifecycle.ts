// The instance lifecycle, in one place: which connectors exist, when they start and stop, and when send workers pause
// and resume. A connector exists only for an instance this node owns (see ownership.ts): each is live on one node.
import { internal, unavailable } from '../core/errors.js';
import type { Connector } from '../core/connector.js';
import type { ConnectorKinds } from '../core/connector-kind.js';
import type { Instance } from '../core/instance.js';
import type { Logger } from '../platform/logger.js';
import type { Unit } from '../platform/store/unit.js';
import type { InstanceConnectorHost } from './connector-host.js';
import type { InstanceRegistry } from './registry.js';
import type { InstanceOwnership, OwnedInstances } from './ownership.js';

/** The send workers as the lifecycle drives them. */
interface WorkerSwitch {
  pause(instanceId: string): Promise<void>;
  resume(instanceId: string): void;
}

export interface LifecycleDeps {
  logger: Logger;
  registry: Pick<InstanceRegistry, 'byInstanceId' | 'readBack'>;
  kinds: ConnectorKinds;
  host: InstanceConnectorHost;
  workers: WorkerSwitch;
  /** Which instances this node owns; the lifecycle acts on what it gains and gives up. */
  ownership: InstanceOwnership;
  /** Instances started at once when this node takes many on (a start, a takeover). */
  startConcurrency: number;
  /** The same for kinds quick to open (no connection of their own to WhatsApp): their store work goes in batches. */
  quickStartConcurrency: number;
}
/** Instances waiting to be opened, taken in order by the runners of one opening (`next`: the first not taken yet). */
interface OpeningLine {
  ids: string[];
  next: number;
}

/** Taking on at least this many instances at once is logged (its start, progress and end). */
const loggedFrom = 200;
/** Progress of a large opening is logged every this many instances. */
const progressEvery = 1000;

export class InstanceLifecycle implements OwnedInstances {
  private readonly connectors = new Map<string, Connector>();
  /** Instances acquired before `openOwned` (the start, before the node listens): opened by it. */
  private heldBack: string[] | undefined = [];
  /** Owned instances acquired and not started yet: they answer `connecting` meanwhile (a readiness figure too). */
  private readonly pending = new Set<string>();
  /** Openings running now: a stop waits for them (each stops taking more at once). */
  private readonly openings = new Set<Promise<void>>();
  private stopping = false;

  constructor(private readonly deps: LifecycleDeps) {
    // Sends go out while the connection is open, and wait while it is not.
    deps.host.onConnection(async (instanceId, state) => {
      if (state === 'open' && deps.ownership.ownsLocally(instanceId)) deps.workers.resume(instanceId);
      else await deps.workers.pause(instanceId);
    });
    deps.ownership.bind(this);
  }

  ownsLocally(instanceId: string): boolean {
    return this.deps.ownership.ownsLocally(instanceId);
  }

  ownedCount(): number {
    return this.deps.ownership.ownedCount();
  }

  connectorOf(instanceId: string): Connector | undefined {
    return this.connectors.get(instanceId);
  }

  /** Creates the connector of an instance this node owns (idempotent); one owned by another node has none here. */
  attach(instance: Instance): Connector {
    let connector = this.connectors.get(instance.id);
    if (!connector) {
      if (!this.deps.ownership.ownsLocally(instance.id)) {
        throw unavailable(`instance "${instance.name}" is live on another node of this service; ask that node (or try again shortly)`);
      }
      const kind = this.deps.kinds.of(instance.integration);
      if (!kind) throw internal(`instance "${instance.name}" has the integration ${instance.integration}, which no registered connector kind has`);
      connector = kind.create(instance, this.deps.host);
      this.connectors.set(instance.id, connector);
    }
    return connector;
  }

  /**
   * At start, before the node listens: this node takes its share of the instances (owner rows claimed), and opens
   * none of them yet — `openOwned` does, once the node answers.
   */
  async takeShare(): Promise<void> {
    await this.deps.ownership.start();
  }

  /** Stops this node taking on or handing over instances until `resumeOwnership` (operators, tests); what it owns stays. */
  pauseOwnership(): Promise<void> {
    return this.deps.ownership.pause();
  }

  /** Takes this node's share again (a look at once). */
  resumeOwnership(): Promise<void> {
    return this.deps.ownership.resume();
  }

  /**
   * Opens the instances taken on by `takeShare` (a bounded number at once); from now on instances this node gains open
   * at once. Resolves once all are started (or a stop cut it short); never throws.
   */
  async openOwned(): Promise<void> {
    const ids = this.heldBack ?? [];
    this.heldBack = undefined;
    await this.open(ids);
  }

  /** Owned instances not started yet: taken on at a start or takeover, still waiting for their turn. */
  openingCount(): number {
    return this.pending.size;
  }

  /** Whether this owned instance waits for its turn to be opened (it has no connector yet, and will connect). */
  awaitsOpening(instanceId: string): boolean {
    return this.pending.has(instanceId);
  }

  /** A new instance, created on this node in `unit`: owned here at once (so it can connect), until a rebalance moves it. */
  ownCreated(unit: Unit, instanceId: string): Promise<void> {
    return this.deps.ownership.claimIn(unit, instanceId);
  }

  /**
   * Instances this node now owns: each gets its connector, and those with a session (or always-on kinds, or not left
   * closed) connect, a bounded number at once.
   */
  async acquired(instanceIds: readonly string[]): Promise<void> {
    if (this.stopping) return;
    if (this.heldBack) {
      this.heldBack.push(...instanceIds);
      for (const id of instanceIds) this.pending.add(id);
      return;
    }
    await this.open(instanceIds);
  }

  /** Starts these owned instances, a bounded number at once, until a stop; never throws. */
  private open(instanceIds: readonly string[]): Promise<void> {
    const opening = this.openNow(instanceIds).finally(() => this.openings.delete(opening));
    this.openings.add(opening);
    return opening;
  }

  private async openNow(instanceIds: readonly string[]): Promise<void> {
    if (instanceIds.length === 0) return;
    const queue = [...instanceIds];
    for (const id of queue) this.pending.add(id);
    const total = queue.length;
    const startedAt = Date.now();
    const logged = total >= loggedFrom;
    if (logged) this.deps.logger.info({ instances: total }, 'opening owned instances');
    let done = 0;
    // Instances created on another node may be unknown here yet: those alone are read (in a few queries). One still
    // unknown (the read failed) is not opened here now; its change signal reads it later, and connect opens it.
    const unknown = instanceIds.filter((id) => !this.deps.registry.byInstanceId(id));
    if (unknown.length > 0)
      await this.deps.registry
        .readBack(unknown)
        .catch((error: unknown) => this.deps.logger.warn({ err: error, instances: unknown.length }, 'instances taken on could not be read'));
    // Kinds quick to open go many at once; the others (a socket and handshake each) `startConcurrency` at a time. Each
    // runner takes the next id by position (shift() on a list of thousands moves all the others, every time).
    const quick: OpeningLine = { ids: [], next: 0 };
    const slow: OpeningLine = { ids: [], next: 0 };
    for (const id of queue) {
      const instance = this.deps.registry.byInstanceId(id);
      (instance && this.deps.kinds.of(instance.integration)?.quickToOpen ? quick : slow).ids.push(id);
    }
    const drain = async (line: OpeningLine): Promise<void> => {
      while (line.next < line.ids.length && !this.stopping) {
        const id = line.ids[line.next++];
        await this.startOwned(id);
        this.pending.delete(id);
        done += 1;
        if (logged && done % progressEvery === 0 && done < total) this.deps.logger.info({ opened: done, of: total }, 'opening owned instances');
      }
    };
    const runners = (line: OpeningLine, concurrency: number) => Array.from({ length: Math.min(concurrency, line.ids.length) }, () => drain(line));
    try {
      await Promise.all([...runners(quick, this.deps.quickStartConcurrency), ...runners(slow, this.deps.startConcurrency)]);
    } finally {
      // Those not reached (a stop) wait no more.
      for (const line of [quick, slow]) for (const id of line.ids.slice(line.next)) this.pending.delete(id);
    }
    if (logged) this.deps.logger.info({ opened: done, of: total, ms: Date.now() - startedAt }, 'owned instances opened');
  }

  private async startOwned(instanceId: string): Promise<void> {
    const instance = this.deps.registry.byInstanceId(instanceId);
    if (!instance || !this.deps.ownership.ownsLocally(instanceId)) return;
    try {
      const alwaysOn = this.deps.kinds.of(instance.integration)?.alwaysOn === true;
      // The session is read only when nothing else says to connect (the connector reads it again as it starts).
      const connects = alwaysOn || instance.status !== 'close' || (await this.deps.host.loadSession(instance.id)) !== null;
      // Given up or stopping meanwhile: no connector is made for it.
      if (this.stopping || !this.deps.ownership.ownsLocally(instanceId)) return;
      const connector = this.attach(instance);
      if (connects) await connector.start();
    } catch (error) {
      this.deps.logger.error({ err: error, instance: instance.name }, 'instance failed to start');
    }
  }

  /** This node gives the instance up: its sends pause, its connector stops and is forgotten (no logout: it goes on elsewhere). */
  async stopLocally(instanceId: string): Promise<void> {
    const connector = this.connectors.get(instanceId);
    this.connectors.delete(instanceId);
    this.pending.delete(instanceId);
    await this.deps.workers.pause(instanceId);
    await connector?.stop().catch((error: unknown) => this.deps.logger.warn({ err: error, instanceId }, 'connector did not stop cleanly'));
  }

  async connect(instance: Instance): Promise<Connector> {
    const connector = this.attach(instance);
    if (connector.state() === 'close') await connector.start();
    return connector;
  }

  async restart(instance: Instance): Promise<Connector> {
    const connector = this.attach(instance);
    await connector.stop();
    await connector.start();
    return connector;
  }

  /** The instance's proxy changed: a running connector reconnects what goes through it (a closed one reads it at start). */
  async proxyChanged(instance: Instance): Promise<void> {
    const connector = this.connectors.get(instance.id);
    if (!connector || connector.state() === 'close') return;
    await connector.proxyChanged?.();
  }

  async logout(instance: Instance): Promise<void> {
    await this.attach(instance).logout();
  }

  /**
   * Closes and forgets the connector of a deleted instance: a connected or connecting one logs out first (as Evolution
   * does), one already closed is only stopped (no logout events for an account that is not linked).
   */
  async detach(instance: Instance): Promise<void> {
    const connector = this.connectors.get(instance.id);
    this.connectors.delete(instance.id);
    await this.deps.workers.pause(instance.id);
    if (connector) {
      if (connector.state() === 'close') await connector.stop().catch(() => undefined);
      else await connector.logout().catch(() => connector.stop());
    }
    this.deps.ownership.forget(instance.id);
  }

  /** A stop: no more claims or handovers, every connector stopped (the instances stay owned until `handOverAll`). */
  async stopAll(): Promise<void> {
    // An opening still running (a start, a takeover) takes no more instances; those starting now finish first.
    this.stopping = true;
    this.heldBack = undefined;
    this.pending.clear();
    await this.deps.ownership.halt();
    await Promise.all([...this.openings]);
    const all = [...this.connectors.values()];
    await Promise.all(all.map((c) => c.stop().catch(() => undefined)));
  }

  /** After a clean stop: every instance of this node freed, and the other nodes told to take them now. */
  async handOverAll(): Promise<void> {
    this.connectors.clear();
    await this.deps.ownership.releaseAll();
  }
}
