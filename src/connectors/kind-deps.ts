// What the service hands every connector kind when it builds it: the host, the instances it may look up, settings.
import type { ConnectorHost } from '../core/connector.js';
import type { Instance } from '../core/instance.js';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { Db } from '../platform/store/db.js';
import type { RemovalHook } from '../instances/removal.js';
import type { StoreSignals } from '../platform/store/signals.js';

/** The instances as a kind may read them (for routing inbound traffic to its instances). */
interface InstanceDirectory {
  all(): Instance[];
  byId(id: string): Instance | undefined;
  /** The instance whose linked account has this address, as last linked (its status says whether it still is). */
  byOwnerJid(jid: string): Instance | undefined;
}

export interface KindDeps {
  config: Config;
  logger: Logger;
  db: Db;
  host: ConnectorHost;
  instances: InstanceDirectory;
  /** The service's secret key (a kind may derive its own secrets from it). */
  secretsKey: Buffer;
  /** The nodes sharing the store: their signals, this node's incarnation, and whether there can be others (PostgreSQL). */
  fleet: { signals: StoreSignals; incarnation: string; shared: boolean };
  /** Registers the deletion of what the kind keeps of a deleted instance in its own tables. */
  onRemove(hook: RemovalHook): void;
}
