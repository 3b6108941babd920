// The fence on writes for an instance: only the node that owns it (with the generation it acquired) may write for it.
import { CodedError } from '../../core/errors.js';
import type { Tx } from '../store/types.js';
import type { WriteUnit } from '../store/write-unit.js';

/**
 * A write for an instance this node no longer owns was refused (another node took it over, or this one let it go);
 * a request that ran into it is answered 503 (the instance is live on another node).
 */
export class InstanceFencedError extends CodedError {
  constructor(
    readonly instanceId: string,
    reason: string,
  ) {
    super('unavailable', `this node no longer owns instance ${instanceId} (${reason}); the write was refused`);
    this.name = 'InstanceFencedError';
  }
}

/**
 * Checks ownership inside the write it guards, so a node that lost its lease cannot write for the instance: the
 * refused write throws `InstanceFencedError`, and the instance's connector is stopped on this node.
 */
export interface OwnershipFence {
  /** In the transaction of a write: throws unless this node still owns the instance (a takeover waits for the write). */
  check(tx: Tx, instanceId: string): Promise<void>;
  /** `check` for many instances at once (one read): throws for the first one this node no longer owns. */
  checkMany(tx: Tx, instanceIds: readonly string[]): Promise<void>;
  /** Adds to a write unit what makes the whole unit fail unless this node still owns the instance. */
  guard(unit: WriteUnit, instanceId: string): void;
  /** The error a guarded write unit failed with, as `InstanceFencedError` when the fence refused it. */
  refusal(error: unknown, instanceId: string): unknown;
}
