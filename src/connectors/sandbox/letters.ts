// What the sandbox network hands an instance (a message, a receipt, a change, a presence, a group event) as a value.
import type { ConnectorHost, InboundMessage, MessageChange, Presence } from '../../core/connector.js';
import type { EventName } from '../../core/event-catalog.js';
import type { MessageStatus } from '../../core/message-status.js';

/**
 * One thing the network hands an instance, as the host takes it. Kept as a value so it can wait in the store for the
 * node that has the instance live (see mailbox.ts); its JSON is the letter's payload.
 */
export type Letter =
  | { kind: 'received'; message: InboundMessage }
  | { kind: 'status'; keyId: string; status: MessageStatus }
  | { kind: 'changed'; change: MessageChange }
  | { kind: 'presence'; chatJid: string; senderJid: string; presence: Presence }
  | { kind: 'event'; event: EventName; data: unknown };

const letterKinds: readonly Letter['kind'][] = ['received', 'status', 'changed', 'presence', 'event'];

/** Hands `letter` to the instance through this node's host, as the router does for a connector live here. */
export function handToHost(host: ConnectorHost, instanceId: string, letter: Letter): Promise<void> {
  switch (letter.kind) {
    case 'received':
      return host.messageReceived(instanceId, letter.message);
    case 'status':
      return host.messageStatus(instanceId, letter.keyId, letter.status);
    case 'changed':
      return host.messageChanged(instanceId, letter.change);
    case 'presence':
      return host.presenceReceived(instanceId, letter.chatJid, letter.senderJid, letter.presence);
    case 'event':
      return host.eventOccurred(instanceId, letter.event, letter.data);
  }
}

/** The letter stored as `kind` and `payload` (the letter's JSON), or null when the row is not a letter this code knows. */
export function letterOf(kind: string, payload: string): Letter | null {
  if (!letterKinds.includes(kind as Letter['kind'])) return null;
  const parsed: unknown = JSON.parse(payload);
  if (typeof parsed !== 'object' || parsed === null || (parsed as { kind?: unknown }).kind !== kind) return null;
  return parsed as Letter;
}
