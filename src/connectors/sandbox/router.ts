// Message routing between sandbox instances: delivery, status posts, receipts and presence.
import type { Logger } from '../../platform/logger.js';
import type { Instance } from '../../core/instance.js';
import {
  TransientConnectorError,
  type ConnectorHost,
  type InboundMessage,
  type MessageChange,
  type MessageKeyRef,
  type NumberCheck,
  type OutboundMessage,
  type OwnPresence,
  type Presence,
} from '../../core/connector.js';
import { accountForms, isLidAddress, lidWithoutDevice, parseUserAddress, sandboxLid, STATUS_BROADCAST } from './addresses.js';
import { sendsReadReceipts } from './privacy.js';
import type { SandboxBlocks } from './blocks.js';
import type { SandboxDelivery } from './delivery.js';
import type { LinkedParty } from './party.js';

export type { LinkedParty } from './party.js';

/** How the network finds instances (the core's registry). */
export interface InstanceLookup {
  byId(id: string): Instance | undefined;
  /** A SANDBOX instance currently linked with that owner address. */
  byOwnerJid(jid: string): Instance | undefined;
  /** A SANDBOX instance currently linked to the account whose @lid address this is. */
  byLid(lid: string): Instance | undefined;
}

export interface RouterDeps {
  host: ConnectorHost;
  lookup: InstanceLookup;
  /** Hands things to instances: here when live here, by letter when live on another node of the fleet. */
  delivery: SandboxDelivery;
  /** Who blocked whom: a blocked sender's messages stop at the server. */
  blocks: SandboxBlocks;
  /** Group messages go to the group's members. */
  groups: { deliver(sender: LinkedParty, message: OutboundMessage): Promise<void> };
  logger: Logger;
}

/** A change of a sent message as it travels: deleted for everyone, or its content replaced. */
export type SentChange = { kind: 'revoke' } | { kind: 'edit'; content: Record<string, unknown>; timestampMs: number };

const nowSeconds = () => Math.floor(Date.now() / 1000);

export class SandboxRouter {
  constructor(private readonly deps: RouterDeps) {}

  /**
   * Sends `message` from `sender`; delivery is idempotent per key id (the core dedups on it). Returning is the
   * server's acknowledgement (the core records SERVER_ACK); receipts beyond it are reported here.
   */
  async send(sender: LinkedParty, message: OutboundMessage): Promise<void> {
    if (message.remoteJid === STATUS_BROADCAST) return this.postStatus(sender, message);
    if (message.remoteJid.endsWith('@g.us')) return this.deps.groups.deliver(sender, message);
    const { host } = this.deps;
    const to = this.phoneAddress(message.remoteJid);
    if (to !== null && accountForms(to).includes(sender.ownerJid)) {
      // "Message yourself": the own account has it at once; nothing to deliver elsewhere.
      await host.messageStatus(sender.instanceId, message.keyId, 'DELIVERY_ACK');
      return;
    }
    const target = to === null ? undefined : this.accountOf(to);
    if (!target?.ownerJid) {
      this.debug(sender, { keyId: message.keyId }, 'sandbox message to a number without a linked instance');
      return;
    }
    if (await this.deps.blocks.blocked(target.id, accountForms(sender.ownerJid))) {
      // As WhatsApp: the server takes the message (SERVER_ACK) and never hands it to an account that blocked its sender.
      this.debug(sender, { keyId: message.keyId }, 'sandbox message not delivered: the recipient blocked the sender');
      return;
    }
    const received = { kind: 'received' as const, message: this.inbound(sender, message, sender.ownerJid, null, target.ownerJid) };
    const { delivery } = this.deps;
    if (delivery.handsHere(target.id)) {
      // Live here: the recipient's copy and the receipts are reported at once, in this order (before anything awaits,
      // so the messages of one batch keep their order); the core records reports of a turn of the event loop together.
      const reports = [delivery.hand(target.id, received, 'refuse'), host.messageStatus(sender.instanceId, message.keyId, 'DELIVERY_ACK')];
      if (target.settings.readMessages) reports.push(this.readBy(target, sender.instanceId, [message.keyId]));
      await Promise.all(reports);
    } else {
      // Live on another node (a letter, handed over there in order), or on none.
      if (!(await delivery.hand(target.id, received, 'refuse'))) {
        // The account of a sandbox instance that is not running right now on any node (the service is starting, or
        // it stopped): as a phone that is off, it gets the message later; the send is retried rather than
        // acknowledged into the void.
        throw new TransientConnectorError(`sandbox instance ${target.name} (${to}) is not running right now`);
      }
      await host.messageStatus(sender.instanceId, message.keyId, 'DELIVERY_ACK');
      if (target.settings.readMessages) await this.readBy(target, sender.instanceId, [message.keyId]);
    }
    this.debug(sender, { keyId: message.keyId, to: target.name }, 'sandbox message delivered');
  }

  /**
   * The sender deleted or edited its message `target` (in a chat with a person): the recipient's copy changes, as the
   * recipient sees it (the chat is the sender's, the message not its own). A recipient that is not running, or that
   * blocked the sender, never sees the change.
   */
  async change(sender: LinkedParty, target: MessageKeyRef, change: SentChange): Promise<void> {
    const to = this.phoneAddress(target.remoteJid);
    if (to === null || accountForms(to).includes(sender.ownerJid)) return;
    const recipient = this.accountOf(to);
    if (!recipient || (await this.deps.blocks.blocked(recipient.id, accountForms(sender.ownerJid)))) return;
    const key: MessageKeyRef = { remoteJid: sender.ownerJid, remoteJidAlt: sandboxLid(sender.ownerJid), fromMe: false, id: target.id };
    const changed: MessageChange =
      change.kind === 'revoke' ? { kind: 'revoke', key } : { kind: 'edit', key, content: change.content, timestampMs: change.timestampMs };
    await this.deps.delivery.hand(recipient.id, { kind: 'changed', change: changed }, 'skip');
  }

  /** The reader read `keys`; each sender that is a sandbox instance gets READ unless the reader hides reads. */
  async markRead(readerId: string, keys: { remoteJid: string; keyId: string }[]): Promise<void> {
    const reader = this.deps.lookup.byId(readerId);
    if (!sendsReadReceipts(reader)) return;
    for (const key of keys) {
      const from = this.phoneAddress(key.remoteJid);
      // By any spelling of the sender's account (a Brazilian mobile with or without its ninth digit).
      const sender =
        from === null
          ? undefined
          : accountForms(from)
              .map((a) => this.deps.lookup.byOwnerJid(a))
              .find(Boolean);
      if (!sender || sender.id === readerId) continue;
      await this.deps.delivery.hand(sender.id, { kind: 'status', keyId: key.keyId, status: 'READ' }, 'host');
    }
  }

  async sendPresence(sender: LinkedParty, chatJid: string, presence: Presence): Promise<void> {
    const to = this.phoneAddress(chatJid);
    const target = to === null || accountForms(to).includes(sender.ownerJid) ? undefined : this.accountOf(to);
    if (!target) return;
    await this.deps.delivery.hand(target.id, { kind: 'presence', chatJid: sender.ownerJid, senderJid: sender.ownerJid, presence }, 'skip');
  }

  /**
   * The sender's own presence (online or offline), shown to every other live linked instance (on this node or
   * another), as in their chat with it.
   */
  async setOwnPresence(sender: LinkedParty, presence: OwnPresence, audience: LinkedParty[]): Promise<void> {
    for (const party of audience) {
      if (party.instanceId === sender.instanceId || party.ownerJid === sender.ownerJid) continue;
      await this.deps.delivery.hand(party.instanceId, { kind: 'presence', chatJid: sender.ownerJid, senderJid: sender.ownerJid, presence }, 'skip');
    }
  }

  /**
   * A number (or @lid address) exists when a linked sandbox instance owns it (by any spelling of the account); the
   * answer carries both of the account's addresses.
   */
  onWhatsApp(requests: { number: string; jid: string }[]): NumberCheck[] {
    return requests.map(({ number, jid }) => {
      const address = this.phoneAddress(jid);
      const owner = address === null ? undefined : this.accountOf(address);
      if (!owner?.ownerJid) return { exists: false, jid, number };
      const name = owner.profileName ? { name: owner.profileName } : {};
      return { exists: true, jid: owner.ownerJid, number, ...name, lid: sandboxLid(owner.ownerJid) };
    });
  }

  /** The other address of a sandbox account (its @lid one for its phone one, and the reverse); null for no account. */
  alternateAddress(jid: string): string | null {
    if (isLidAddress(jid)) return this.deps.lookup.byLid(lidWithoutDevice(jid))?.ownerJid ?? null;
    const address = parseUserAddress(jid);
    const owner = address === null ? undefined : this.accountOf(address);
    return owner?.ownerJid ? sandboxLid(owner.ownerJid) : null;
  }

  /** The phone address a message to `jid` goes to: its own for a number or phone address, the account's for an @lid one. */
  private phoneAddress(jid: string): string | null {
    if (isLidAddress(jid)) return this.deps.lookup.byLid(lidWithoutDevice(jid))?.ownerJid ?? null;
    return parseUserAddress(jid);
  }

  /** A status post: delivered to every linked instance in the audience, as WhatsApp shows statuses. */
  private async postStatus(sender: LinkedParty, message: OutboundMessage): Promise<void> {
    const { host } = this.deps;
    const audience = new Set<string>();
    for (const entry of message.statusJidList ?? []) {
      const address = typeof entry === 'string' ? parseUserAddress(entry) : null;
      if (address !== null && address !== sender.ownerJid) audience.add(address);
    }
    const viewers: Instance[] = [];
    for (const address of audience) {
      const target = this.accountOf(address);
      if (!target) continue;
      // A viewer with readStatus off ignores statuses (no event), as the WhatsApp connectors do; its phone still
      // acknowledges the delivery (when it is live somewhere).
      const viewer = this.deps.lookup.byId(target.id) ?? target;
      const letter = viewer.settings.readStatus
        ? { kind: 'received' as const, message: this.inbound(sender, message, STATUS_BROADCAST, sender.ownerJid) }
        : null;
      if (await this.deps.delivery.hand(target.id, letter, 'skip')) viewers.push(target);
    }
    if (viewers.length === 0) return;
    await host.messageStatus(sender.instanceId, message.keyId, 'DELIVERY_ACK');
    this.debug(sender, { keyId: message.keyId, viewers: viewers.length }, 'sandbox status delivered');
    for (const viewer of viewers) {
      if (viewer.settings.readStatus) await this.readBy(viewer, sender.instanceId, [message.keyId]);
    }
  }

  private async readBy(reader: Instance, senderId: string, keyIds: string[]): Promise<void> {
    if (!sendsReadReceipts(this.deps.lookup.byId(reader.id) ?? reader)) return;
    for (const keyId of keyIds) await this.deps.host.messageStatus(senderId, keyId, 'READ');
  }

  /** The sandbox instance whose account this is (by any spelling of it), running or not. */
  private accountOf(address: string): Instance | undefined {
    for (const candidate of accountForms(address)) {
      const instance = this.deps.lookup.byOwnerJid(candidate);
      if (instance) return instance;
    }
    return undefined;
  }

  private inbound(sender: LinkedParty, message: OutboundMessage, remoteJid: string, participant: string | null, recipientJid?: string): InboundMessage {
    const content = structuredClone(message.content);
    if (recipientJid) reactionFromRecipientView(content, remoteJid, recipientJid);
    // Both addresses of the sender, as WhatsApp Web delivers them (the phone one first, the @lid one beside it).
    return {
      keyId: message.keyId,
      remoteJid,
      ...(remoteJid !== STATUS_BROADCAST ? { remoteJidAlt: sandboxLid(remoteJid) } : {}),
      fromMe: false,
      ...(participant !== null ? { participant, participantAlt: sandboxLid(participant) } : {}),
      pushName: sender.profileName,
      messageType: message.messageType,
      content,
      timestamp: nowSeconds(),
    };
  }

  private debug(sender: LinkedParty, details: Record<string, unknown>, text: string): void {
    const { logger, lookup } = this.deps;
    if (!logger.isLevelEnabled('debug')) return;
    logger.debug({ instance: lookup.byId(sender.instanceId)?.name ?? sender.instanceId, ...details }, text);
  }
}

/**
 * A reaction's target key as the recipient sees it (as WhatsApp Web clients rewrite it on arrival): the chat is the
 * sender's, and the message is the recipient's own unless the sender reacted to a message of its own.
 */
function reactionFromRecipientView(content: Record<string, unknown>, chatJid: string, recipientJid: string): void {
  const reaction = content.reactionMessage;
  if (typeof reaction !== 'object' || reaction === null) return;
  const key = (reaction as { key?: Record<string, unknown> }).key;
  if (typeof key !== 'object' || key === null) return;
  const author = typeof key.participant === 'string' ? key.participant : key.remoteJid;
  const address = typeof author === 'string' ? (parseUserAddress(author) ?? author) : '';
  // A reaction to the recipient's own message may name it by its @lid address.
  if (typeof author === 'string' && isLidAddress(author) && lidWithoutDevice(author) === sandboxLid(recipientJid)) {
    key.fromMe = key.fromMe !== true;
    key.remoteJid = chatJid;
    return;
  }
  key.fromMe = key.fromMe === true ? false : accountForms(address).includes(recipientJid);
  key.remoteJid = chatJid;
}
