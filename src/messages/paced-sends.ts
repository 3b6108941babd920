// Which instances' sends are paced now, and each one's pacing gate (kept while the instance exists).
import type { Db } from '../platform/store/db.js';
import type { Instance } from '../core/instance.js';
import { effectivePacing, type Pacing } from '../core/pacing.js';
import { PacingGate, systemClock, type PacingClock } from './pacing-gate.js';
import { hasSentTo } from './queue-queries.js';

export interface PacedSendDeps {
  db: Db;
  instanceById(id: string): Instance | undefined;
  /** The pacing of instances that set none of their own (PACING_* variables). */
  pacingDefaults: Pacing;
  /** The gates' time (the system's unless a test drives its own). */
  pacingClock?: PacingClock;
  /** Draws the random gaps (Math.random unless a test seeds its own). */
  pacingRandom?: () => number;
}

export class PacedSends {
  private readonly gates = new Map<string, PacingGate>();

  constructor(private readonly deps: PacedSendDeps) {}

  /** The instance's gate when its sends are paced now; none: they leave unpaced, in runs, as fast as they can. */
  gateFor(instanceId: string): PacingGate | undefined {
    const instance = this.deps.instanceById(instanceId);
    if (!instance || !(instance.pacing?.enabled ?? this.deps.pacingDefaults.enabled)) return undefined;
    let gate = this.gates.get(instanceId);
    if (!gate) {
      gate = new PacingGate({
        // Read at each passage: a settings change applies from the next message on.
        pacing: () => effectivePacing(this.deps.pacingDefaults, this.deps.instanceById(instanceId)?.pacing),
        hasWrittenTo: (chat) => hasSentTo(this.deps.db, instanceId, chat),
        clock: this.deps.pacingClock ?? systemClock,
        random: this.deps.pacingRandom ?? Math.random,
      });
      this.gates.set(instanceId, gate);
    }
    return gate;
  }

  /** Drops the gates of instances deleted meanwhile. */
  sweep(): void {
    for (const id of this.gates.keys()) if (!this.deps.instanceById(id)) this.gates.delete(id);
  }
}
