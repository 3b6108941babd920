// Applies a verified Meta webhook: received messages to MESSAGES_UPSERT, receipts of our sends to MESSAGES_UPDATE.
import type { Logger } from '../../platform/logger.js';
import type { Instance } from '../../core/instance.js';
import type { ConnectorHost } from '../../core/connector.js';
import { changesOf, referencedIds, statusOf, toInboundMessage, type GraphChange } from './inbound.js';
import { MessageIds } from './message-ids.js';
import { earlyReceipts } from './early-receipts.js';

export interface WebhookDeliveryDeps {
  host: ConnectorHost;
  /** The WHATSAPP-BUSINESS instances whose `number` is this phone-number id. */
  instancesFor(phoneNumberId: string): Instance[];
  logger: Logger;
}

export interface DeliveryOutcome {
  messages: number;
  statuses: number;
  /** Phone-number ids no instance has (Meta app shared with another service, or a deleted instance). */
  unmatched: string[];
}

/** The WHATSAPP-BUSINESS instances of a registry whose phone-number id matches. */
export function instancesByPhoneNumberId(all: () => Instance[]): (phoneNumberId: string) => Instance[] {
  return (phoneNumberId) => all().filter((i) => i.integration === 'WHATSAPP-BUSINESS' && i.number === phoneNumberId);
}

/**
 * Stores what the payload reports. Duplicates are harmless (Meta redelivers until it gets a 200): a message is stored
 * once per key id and a status never steps back. A store failure throws, so the caller answers 5xx and Meta retries.
 */
export async function deliverWebhook(payload: unknown, deps: WebhookDeliveryDeps): Promise<DeliveryOutcome> {
  const ids = new MessageIds(deps.host.sessionKeys);
  const outcome: DeliveryOutcome = { messages: 0, statuses: 0, unmatched: [] };
  for (const change of changesOf(payload)) {
    const instances = deps.instancesFor(change.phoneNumberId);
    if (instances.length === 0) {
      outcome.unmatched.push(change.phoneNumberId);
      continue;
    }
    for (const instance of instances) {
      const applied = await applyChange(instance, change, ids, deps);
      outcome.messages += applied.messages;
      outcome.statuses += applied.statuses;
    }
  }
  return outcome;
}

async function applyChange(instance: Instance, change: GraphChange, ids: MessageIds, deps: WebhookDeliveryDeps) {
  const log = deps.logger.child({ instance: instance.name, integration: 'WHATSAPP-BUSINESS' });
  for (const error of change.errors) log.warn({ code: error.code ?? null, title: error.title ?? null }, 'Meta reported an error for the number');
  let messages = 0;
  let statuses = 0;

  const referenced = change.messages.flatMap(referencedIds);
  const ours = referenced.length > 0 ? await ids.keyIdsOf(instance.id, referenced) : new Map<string, string>();
  for (const graphMessage of change.messages) {
    const message = toInboundMessage(graphMessage, change.contacts, ours);
    if (!message) {
      log.warn('Meta webhook message without id or sender skipped');
      continue;
    }
    await deps.host.messageReceived(instance.id, message);
    messages += 1;
  }

  const wamids = change.statuses.map((s) => s.id).filter((id): id is string => typeof id === 'string' && id !== '');
  const keyIds = wamids.length > 0 ? await ids.keyIdsOf(instance.id, wamids) : new Map<string, string>();
  const early: string[] = [];
  for (const status of change.statuses) {
    const next = statusOf(status);
    if (!next || !status.id) continue;
    const error = status.errors?.[0];
    // Meta's reason travels with the ERROR (as local refusals' do).
    const detail = next === 'ERROR' && error ? `Meta error ${error.code ?? '?'}: ${error.title ?? error.message ?? 'message not delivered'}` : undefined;
    const keyId = keyIds.get(status.id);
    if (!keyId) {
      // A send still waiting for Graph's answer, or a message another tool sent from this number: held a while.
      earlyReceipts.hold(instance.id, status.id, next, detail);
      early.push(status.id);
      continue;
    }
    if (next === 'ERROR') log.warn({ keyId, code: error?.code ?? null, title: error?.title ?? null }, 'Meta could not deliver a sent message');
    await deps.host.messageStatus(instance.id, keyId, next, detail);
    statuses += 1;
  }
  // Looked at again once held: a send that recorded its wamid meanwhile took nothing, so they are applied here.
  if (early.length > 0) {
    const known = await ids.keyIdsOf(instance.id, early);
    for (const [wamid, keyId] of known) {
      for (const held of earlyReceipts.take(instance.id, wamid)) {
        await deps.host.messageStatus(instance.id, keyId, held.status, held.detail);
        statuses += 1;
      }
    }
  }
  return { messages, statuses };
}
