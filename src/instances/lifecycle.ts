// The instance lifecycle, in one place: which connectors exist, when they start and stop, and when send workers pause
// and resume. Node ownership leases (several nodes on one store, each instance live on one of them) will go here.
import { internal } from '../core/errors.js';
import type { Connector } from '../core/connector.js';
import type { ConnectorKinds } from '../core/connector-kind.js';
import type { Instance } from '../core/instance.js';
import type { Logger } from '../platform/logger.js';
import type { InstanceConnectorHost } from './connector-host.js';
import type { InstanceRegistry } from './registry.js';

/** The send workers as the lifecycle drives them. */
interface WorkerSwitch {
  pause(instanceId: string): Promise<void>;
  resume(instanceId: string): void;
}

export interface LifecycleDeps {
  logger: Logger;
  registry: Pick<InstanceRegistry, 'all'>;
  kinds: ConnectorKinds;
  host: InstanceConnectorHost;
  workers: WorkerSwitch;
}

export class InstanceLifecycle {
  private readonly connectors = new Map<string, Connector>();

  constructor(private readonly deps: LifecycleDeps) {
    // Sends go out while the connection is open, and wait while it is not.
    deps.host.onConnection(async (instanceId, state) => {
      if (state === 'open') deps.workers.resume(instanceId);
      else await deps.workers.pause(instanceId);
    });
  }

  connectorOf(instanceId: string): Connector | undefined {
    return this.connectors.get(instanceId);
  }

  /** Creates the connector of an instance (idempotent). */
  attach(instance: Instance): Connector {
    let connector = this.connectors.get(instance.id);
    if (!connector) {
      const kind = this.deps.kinds.of(instance.integration);
      if (!kind) throw internal(`instance "${instance.name}" has the integration ${instance.integration}, which no registered connector kind has`);
      connector = kind.create(instance, this.deps.host);
      this.connectors.set(instance.id, connector);
    }
    return connector;
  }

  /** At start: every instance gets its connector; those with a session (or always-on kinds) connect. */
  async startAll(): Promise<void> {
    for (const instance of this.deps.registry.all()) {
      const connector = this.attach(instance);
      const session = await this.deps.host.loadSession(instance.id);
      const alwaysOn = this.deps.kinds.of(instance.integration)?.alwaysOn === true;
      if (session || alwaysOn || instance.status !== 'close') {
        await connector.start().catch((error: unknown) => this.deps.logger.error({ err: error, instance: instance.name }, 'instance failed to start'));
      }
    }
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
    if (!connector) return;
    if (connector.state() === 'close') await connector.stop().catch(() => undefined);
    else await connector.logout().catch(() => connector.stop());
  }

  async stopAll(): Promise<void> {
    const all = [...this.connectors.values()];
    await Promise.all(all.map((c) => c.stop().catch(() => undefined)));
  }
}
