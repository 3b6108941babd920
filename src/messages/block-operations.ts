// Blocking and unblocking accounts through the live connection (`chat/updateBlockStatus`).
import type { BlockAction, Connector } from '../core/connector.js';
import type { ConnectorKinds } from '../core/connector-kind.js';
import { invalidInput } from '../core/errors.js';
import type { Instance } from '../core/instance.js';
import { toJid } from './jid.js';

export interface BlockOperationsDeps {
  connectorOf(instance: Instance): Connector;
  kinds: Pick<ConnectorKinds, 'assertCan'>;
}

export const blockActions: readonly BlockAction[] = ['block', 'unblock'];

export class BlockOperations {
  constructor(private readonly deps: BlockOperationsDeps) {}

  /** Blocks or unblocks a person (groups, lists and the status feed cannot be blocked). */
  async updateBlockStatus(instance: Instance, number: string, action: BlockAction): Promise<void> {
    this.deps.kinds.assertCan(instance, 'blocking');
    if (!blockActions.includes(action)) throw invalidInput(`status must be one of: ${blockActions.join(', ')}`);
    const jid = toJid(number, 'number');
    if (!jid.endsWith('@s.whatsapp.net') && !jid.endsWith('@lid')) {
      throw invalidInput(`number "${number}" is not a person: only accounts can be blocked, not groups, lists or the status feed`);
    }
    const connector = this.deps.connectorOf(instance);
    if (connector.state() !== 'open' || !connector.blocking) {
      throw invalidInput(`instance "${instance.name}" is not connected (state ${connector.state()}); blocking needs a linked instance`);
    }
    await connector.blocking.updateBlockStatus(jid, action);
  }
}
