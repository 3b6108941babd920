// Hands what the sandbox network carries to an instance: here when its connector is live here, else by letter.
import type { ConnectorHost } from '../../core/connector.js';
import { handToHost, type Letter } from './letters.js';
import type { SandboxMailbox } from './mailbox.js';

/**
 * What happens to a letter for an instance live on no node: `refuse` (not handed, the caller decides: a message to a
 * phone that is off), `skip` (momentary things: presence, a change of a message it never sees) or `host` (recorded
 * here, as on one node: receipts, group events).
 */
export type WhenLiveNowhere = 'refuse' | 'skip' | 'host';

/**
 * An instance live on this node gets the letter through this node's host at once (the fast path, no store). Any
 * other gets it through the mailbox when another node has it live. Letters for one instance are handed over in the
 * order they were given here, whichever way each goes.
 */
export class SandboxDelivery {
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly host: ConnectorHost,
    private readonly mailbox: Pick<SandboxMailbox, 'elsewhere' | 'post'>,
    private readonly isLocal: (instanceId: string) => boolean,
  ) {}

  /** Whether a letter for the instance would be handed to this node's host at once (live here, nothing queued for it). */
  handsHere(instanceId: string): boolean {
    return this.isLocal(instanceId) && !this.queues.has(instanceId);
  }

  /** Hands `letter` over (or, with null, only asks whether the instance can be reached); answers whether it was. */
  hand(instanceId: string, letter: Letter | null, whenNowhere: WhenLiveNowhere): Promise<boolean> {
    if (this.handsHere(instanceId)) return this.here(instanceId, letter);
    const previous = this.queues.get(instanceId) ?? Promise.resolve();
    const run = previous.then(() => this.decide(instanceId, letter, whenNowhere));
    const settled = run.catch(() => undefined);
    this.queues.set(instanceId, settled);
    void settled.then(() => {
      if (this.queues.get(instanceId) === settled) this.queues.delete(instanceId);
    });
    return run;
  }

  private async decide(instanceId: string, letter: Letter | null, whenNowhere: WhenLiveNowhere): Promise<boolean> {
    if (this.isLocal(instanceId)) return this.here(instanceId, letter);
    if (await this.mailbox.elsewhere(instanceId)) {
      if (letter !== null) await this.mailbox.post(instanceId, letter);
      return true;
    }
    if (whenNowhere === 'host') return this.here(instanceId, letter);
    return false;
  }

  private async here(instanceId: string, letter: Letter | null): Promise<boolean> {
    if (letter !== null) await handToHost(this.host, instanceId, letter);
    return true;
  }
}
