// A cache of store rows kept in memory on every node of a fleet: re-read when another node says it changed them.
import type { StoreSignals } from '../../platform/store/signals.js';

/** The fleet as a cache needs it. */
export interface FleetSignals {
  signals: StoreSignals;
  /** This node's incarnation (a node ignores its own signals: its cache is up to date). */
  incarnation: string;
  /** Whether other nodes may share the store (PostgreSQL); on a one-node store nothing is sent or heard. */
  enabled: boolean;
}

/**
 * Calls `forget` when another node changed the rows behind `channel` (and after a resync, when signals may have been
 * missed); answers the function that tells the other nodes this node changed them (after its write committed).
 */
export function sharedCache(fleet: FleetSignals | undefined, channel: string, forget: () => void): () => Promise<void> {
  if (!fleet?.enabled) return async () => undefined;
  fleet.signals.listen(channel, (from) => {
    if (from !== fleet.incarnation) forget();
  });
  fleet.signals.onResync(forget);
  return () => fleet.signals.send(channel, fleet.incarnation);
}
