// Instance removal as hooks: each feature deletes the rows it keeps for a deleted instance, in the unit of the delete.
import type { Instance } from '../core/instance.js';
import type { Unit } from '../platform/store/unit.js';

/** Deletes what one feature keeps for the instance, inside the delete's unit of work. */
export type RemovalHook = (unit: Unit, instance: Instance) => Promise<void>;

export class InstanceRemoval {
  private readonly hooks: RemovalHook[] = [];

  /** Adds a hook; hooks run in the order they were added (the composition root decides it). */
  onRemove(hook: RemovalHook): void {
    this.hooks.push(hook);
  }

  async run(unit: Unit, instance: Instance): Promise<void> {
    for (const hook of this.hooks) await hook(unit, instance);
  }
}
