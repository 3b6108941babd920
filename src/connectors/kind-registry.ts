// The registered connector kinds, and the answers about them other features ask ("can this instance do that?").
import { UnsupportedOperationError } from '../core/connector.js';
import type { ConnectorKind, ConnectorKinds, KindCapabilities, Operation } from '../core/connector-kind.js';
import type { Instance } from '../core/instance.js';

/** Whether a kind's capability modules include `operation`. */
function can(capabilities: KindCapabilities, operation: Operation): boolean {
  if (operation === 'presence') return capabilities.presence;
  if (operation === 'privacy') return capabilities.privacy;
  if (operation === 'whatsappNumbers') return capabilities.contacts === true;
  if (operation === 'profile') return capabilities.profile === true;
  if (operation === 'chats') return capabilities.chats === true;
  if (operation === 'revoke' || operation === 'edit') return capabilities.changes?.includes(operation) === true;
  if (operation === 'blocking') return capabilities.blocking === true;
  if (operation === 'mediaDownload') return capabilities.mediaDownload === true;
  if (operation === 'groups') return capabilities.groups === true;
  if (operation === 'labels') return capabilities.labels === true;
  if (operation === 'templates') return capabilities.templates === true;
  return capabilities.messaging.operations.includes(operation);
}

export class KindRegistry implements ConnectorKinds {
  private readonly byName = new Map<string, ConnectorKind>();

  constructor(kinds: readonly ConnectorKind[]) {
    if (kinds.length === 0) throw new Error('at least one connector kind must be registered');
    for (const kind of kinds) {
      if (this.byName.has(kind.name)) throw new Error(`two connector kinds are named ${kind.name}`);
      this.byName.set(kind.name, kind);
    }
  }

  get names(): readonly string[] {
    return [...this.byName.keys()];
  }

  of(integration: string): ConnectorKind | undefined {
    return this.byName.get(integration);
  }

  all(): ConnectorKind[] {
    return [...this.byName.values()];
  }

  assertCan(instance: Pick<Instance, 'integration'>, operation: Operation): void {
    const kind = this.byName.get(instance.integration);
    if (kind && !can(kind.capabilities, operation)) {
      throw new UnsupportedOperationError(`Method not available on ${kind.label} (integration ${kind.name} cannot do ${operation})`);
    }
  }

  listsAreInteractive(instance: Pick<Instance, 'integration'>): boolean {
    return this.byName.get(instance.integration)?.capabilities.messaging.lists === 'interactive';
  }
}
