// The one interface every integration kind implements, and what the core offers connectors in return.
import { CodedError } from './errors.js';
import type { ConnectionState, Instance, PrivacySettings } from './instance.js';
import type { MessageStatus } from './message-status.js';
import type { EventName } from './event-catalog.js';
import type { ProxySettings } from './proxy.js';

/** A message ready to leave: the stored record's key and content, with the media bytes to upload. */
export interface OutboundMessage {
  keyId: string;
  remoteJid: string;
  messageType: string;
  /** The WhatsApp message content as stored and returned (`{imageMessage: {...}}`, `{conversation: "…"}`). */
  content: Record<string, unknown>;
  /** Status posts: who may see them. */
  statusJidList?: string[];
  /**
   * Media not yet uploaded to the messenger (the connector could not upload when the send was accepted):
   * the id of the encrypted bytes kept in the store, read with `ConnectorHost.loadMedia`.
   */
  mediaBlobId?: string;
  /** Mention every participant of the group (resolved by the connector at send time). */
  mentionsEveryOne?: boolean;
}

export interface QrState {
  code: string;
  base64: string;
  count: number;
  pairingCode: string | null;
  /** Why there is no pairing code although the instance asked for one (the QR code still works). */
  pairingProblem?: string;
}

/** Why a connection is not open although it should be: what a person can act on, and the messenger's code for it. */
export interface ConnectionProblem {
  reason: string;
  statusCode: number;
  /** When the connector tries again by itself (epoch ms); absent when it is trying now or will not retry. */
  retryAt?: number;
}

export interface InboundMessage {
  keyId: string;
  remoteJid: string;
  /** The chat's other address: its @lid one when `remoteJid` is the phone address, or the reverse; when known. */
  remoteJidAlt?: string | null;
  fromMe: boolean;
  participant?: string | null;
  /** The sender's other address in a group (@lid or phone), when known. */
  participantAlt?: string | null;
  pushName: string | null;
  messageType: string;
  content: Record<string, unknown>;
  timestamp: number;
}

/** Thrown by connectors when a send may succeed if tried again later. */
export class TransientConnectorError extends Error {}

/** Thrown by connectors when an operation is not available for the integration. */
export class UnsupportedOperationError extends CodedError {
  constructor(message: string) {
    super('not_available', message);
  }
}

/**
 * A refusal by the messenger's provider (e.g. a Graph API error), or an answer of it that cannot be used: not retried;
 * when the caller waits for the outcome it becomes the answer's error with these messages.
 */
export class ProviderError extends CodedError {
  constructor(kind: 'refused' | 'failed', messages: string[]) {
    super(kind === 'refused' ? 'provider_refused' : 'provider_failed', messages);
  }
}

export type Presence = 'available' | 'unavailable' | 'composing' | 'recording' | 'paused';

/** Sending and reading messages: the one module every connector has. */
export interface MessagingModule {
  send(message: OutboundMessage): Promise<void>;
  /**
   * Sends messages of one chat in this order, without waiting for each before the next goes (where the messenger
   * allows that); answers how many were sent before the first failure, and that failure. Absent: one by one.
   */
  sendMany?(messages: OutboundMessage[]): Promise<{ sent: number; error?: unknown }>;
  /** Uploads encrypted media where the messenger keeps it; absent when the connector uploads at send time. */
  uploadMedia?(encrypted: Buffer, kind: string): Promise<{ url: string; directPath: string }>;
  /**
   * Throws when the connector could never send this message (a recipient or content its provider refuses, a group
   * that does not let this account write), so the send is refused before it is stored, queued or announced.
   */
  check?(message: { remoteJid: string; content: Record<string, unknown> }): void | Promise<void>;
  /**
   * True when a send's outcome is known at once (an HTTP provider): the API then waits for the first attempt and
   * answers its error instead of 201.
   */
  readonly acknowledgesSynchronously?: boolean;
  markRead(keys: { remoteJid: string; keyId: string }[]): Promise<void>;
  /** Deletes a message for everyone (the kind's capabilities say `revoke`); answers the revoke that left. */
  revoke?(target: MessageKeyRef): Promise<ProtocolSent>;
  /** Replaces the content of a sent message (`edit` capability); answers the edit that left. */
  edit?(target: MessageKeyRef, content: Record<string, unknown>): Promise<ProtocolSent>;
}

/** A message as the messenger addresses it (the chat, who sent it from this account's view, its id). */
export interface MessageKeyRef {
  remoteJid: string;
  fromMe: boolean;
  id: string;
  participant?: string;
  /** The other address of the chat or of the participant (phone or LID), when the messenger gave it. */
  remoteJidAlt?: string;
  participantAlt?: string;
}

/** A protocol message (revoke, edit) a connector sent: its own message id and when it left (epoch ms). */
export interface ProtocolSent {
  keyId: string;
  timestampMs: number;
}

/** A stored message changed by its sender on the messenger: deleted for everyone, or its content replaced. */
export type MessageChange =
  | { kind: 'revoke'; key: MessageKeyRef }
  | { kind: 'edit'; key: MessageKeyRef; content: Record<string, unknown>; timestampMs: number };

/** The presences an account shows to everyone (online or not), without a chat. */
export type OwnPresence = 'available' | 'unavailable';

/** Showing a presence (typing, recording…) in a chat, and the account's own one. */
export interface PresenceModule {
  sendPresence(chatJid: string, presence: Presence): Promise<void>;
  /** The account's global presence (online or offline), shown to whoever sees it. */
  setOwnPresence(presence: OwnPresence): Promise<void>;
}

/** Whether a number has an account on the messenger. */
export interface NumberCheck {
  /** The number as asked (echoed). */
  number: string;
  exists: boolean;
  /** The account's address when it exists, else the address the number would have. */
  jid: string;
  /** The account's name, when known. */
  name?: string;
  /** The account's LID address, when known. */
  lid?: string;
}

/** Looking up contacts on the messenger. */
export interface ContactsModule {
  /** One answer per address, in the order given; `numbers[i]` is echoed as the answer's `number`. */
  onWhatsApp(requests: { number: string; jid: string }[]): Promise<NumberCheck[]>;
  /**
   * The other address of a person, from what the connector already knows (no round trip): the phone address of an
   * @lid one, or the @lid address of a phone one; null when unknown.
   */
  alternateAddress?(jid: string): string | null;
}

/** The account's privacy settings. */
export interface PrivacyModule {
  updatePrivacy(settings: PrivacySettings): Promise<void>;
  /** The settings as the messenger has them; absent when the core's stored ones are the truth (the sandbox). */
  fetchPrivacy?(): Promise<PrivacySettings>;
}

/** A WhatsApp profile as others see it (`chat/fetchProfile`). */
export interface ProfileInfo {
  name: string | null;
  picture: string | null;
  /** The "about" text and when it was set (ISO date), null when it cannot be read. */
  status: { status: string | null; setAt: string | null } | null;
  isBusiness: boolean;
}

/** A business account's profile as WhatsApp describes it (`chat/fetchBusinessProfile`). */
export interface BusinessProfile {
  wid?: string;
  address?: string;
  description: string;
  website: string[];
  email?: string;
  category?: string;
  business_hours: { timezone?: string; business_config?: unknown[] };
}

/** Profiles: reading any account's, changing the own one. */
export interface ProfileModule {
  /** The profile picture's URL, null when there is none or it cannot be seen (privacy, not on WhatsApp). */
  pictureUrl(jid: string): Promise<string | null>;
  /** The profile of `jid` (the own account's too), or null when the number is not on WhatsApp. */
  fetch(jid: string): Promise<ProfileInfo | null>;
  setName(name: string): Promise<void>;
  setStatus(text: string): Promise<void>;
  /** Sets the own profile picture (a square JPEG). */
  setPicture(jpeg: Buffer): Promise<void>;
  removePicture(): Promise<void>;
  /** The business profile of `jid` (the own account's too), null when it is not a business account. */
  businessProfile(jid: string): Promise<BusinessProfile | null>;
}

export type BlockAction = 'block' | 'unblock';

/** Blocking accounts: a blocked account's messages no longer reach this one. */
export interface BlockingModule {
  updateBlockStatus(jid: string, action: BlockAction): Promise<void>;
}

/** Downloading the bytes of a media message. */
export interface MediaModule {
  /**
   * The plain bytes of the media node `node` (`content.imageMessage`, …) of type `mediaType` (`imageMessage`, …);
   * throws a coded error when they cannot be had, or are larger than `maxBytes` (nothing larger is held in memory).
   */
  download(node: Record<string, unknown>, mediaType: string, maxBytes: number): Promise<Buffer>;
}

/** The newest message of a chat, as the messenger's chat changes (archive, mark unread) name the chat's state by it. */
export interface ChatLastMessage {
  key: { id: string; remoteJid: string; fromMe: boolean; participant?: string };
  /** Seconds. */
  messageTimestamp: number;
}

/** Changing a chat on the account (as the phone shows it); null `lastMessage`: none is known. */
export interface ChatsModule {
  archive(jid: string, archive: boolean, lastMessage: ChatLastMessage | null): Promise<void>;
  markUnread(jid: string, lastMessage: ChatLastMessage | null): Promise<void>;
}

/** A member of a group as WhatsApp lists it: its address, its other address when known, and its rank. */
export interface GroupParticipant {
  id: string;
  /** The phone address, when `id` is an @lid one. */
  phoneNumber?: string;
  /** The @lid address, when `id` is a phone one. */
  lid?: string;
  admin: 'admin' | 'superadmin' | null;
}

/** A group as WhatsApp describes it (Baileys' `GroupMetadata`); times in seconds. */
export interface GroupMetadata {
  id: string;
  subject: string;
  subjectOwner?: string;
  subjectTime?: number;
  /** The number of participants. */
  size: number;
  creation?: number;
  owner?: string;
  desc?: string;
  descId?: string;
  descOwner?: string;
  descTime?: number;
  /** Only admins edit the group's info (`locked`). */
  restrict: boolean;
  /** Only admins send messages (`announcement`). */
  announce: boolean;
  isCommunity: boolean;
  isCommunityAnnounce: boolean;
  linkedParent?: string;
  joinApprovalMode?: boolean;
  memberAddMode?: boolean;
  addressingMode?: 'pn' | 'lid';
  participants: GroupParticipant[];
  /** The disappearing-messages timer, seconds (absent or 0: off). */
  ephemeralDuration?: number;
}

export type ParticipantAction = 'add' | 'remove' | 'promote' | 'demote';
export type GroupSetting = 'announcement' | 'not_announcement' | 'locked' | 'unlocked';

/** The outcome for one participant of a participants change: WhatsApp's status code ("200", "403", "409"…). */
export interface ParticipantResult {
  status: string;
  jid: string;
  content?: Record<string, unknown>;
}

/**
 * Groups the account creates, belongs to and administers. Unknown groups and invite codes throw `not_found`; what
 * WhatsApp refuses (not an admin, not a member) throws `invalid_input` with WhatsApp's refusal.
 */
export interface GroupsModule {
  /** Creates a group with the account as its owner and `participants` (addresses) as members. */
  create(subject: string, participants: string[]): Promise<GroupMetadata>;
  metadata(groupJid: string): Promise<GroupMetadata>;
  /** Every group the account takes part in. */
  participating(): Promise<GroupMetadata[]>;
  /** The group's picture URL, null when it has none or it cannot be seen. */
  pictureUrl(groupJid: string): Promise<string | null>;
  updateSubject(groupJid: string, subject: string): Promise<void>;
  updateDescription(groupJid: string, description: string): Promise<void>;
  /** Sets the group's picture (a square JPEG). */
  updatePicture(groupJid: string, jpeg: Buffer): Promise<void>;
  inviteCode(groupJid: string): Promise<string>;
  /** Replaces the invite code (the old link stops working); answers the new one. */
  revokeInvite(groupJid: string): Promise<string>;
  /** The group an invite code leads to, without joining it. */
  inviteInfo(code: string): Promise<GroupMetadata>;
  /** Joins the group of the invite code; answers the group's address. */
  acceptInvite(code: string): Promise<string>;
  updateParticipants(groupJid: string, participants: string[], action: ParticipantAction): Promise<ParticipantResult[]>;
  updateSetting(groupJid: string, setting: GroupSetting): Promise<void>;
  /** Sets the disappearing-messages timer in seconds (0: off). */
  toggleEphemeral(groupJid: string, expiration: number): Promise<void>;
  leave(groupJid: string): Promise<void>;
}

/** A label of the account (WhatsApp Business): its id on the messenger, name, colour (a palette index) and state. */
export interface Label {
  id: string;
  name: string;
  /** WhatsApp's palette index (0–19). */
  color: number;
  deleted: boolean;
  /** The id of the WhatsApp Business default label it is, if one. */
  predefinedId?: string;
}

/** A label added to or removed from a chat. */
export interface LabelAssociation {
  type: 'add' | 'remove';
  chatId: string;
  labelId: string;
}

/**
 * What the messenger says about labels: a label created, changed or deleted; a chat's label added or removed; or all the
 * account's labels as they are when it links (`sync`: the stored labels become these, and nothing is announced).
 */
export type LabelChange = { kind: 'edit'; label: Label } | ({ kind: 'association' } & LabelAssociation) | { kind: 'sync'; labels: Label[] };

/** Labelling chats on the account (WhatsApp Business labels). */
export interface LabelsModule {
  /** Throws a coded error when the account has no label `labelId` (where the connector can tell). */
  addChatLabel(chatJid: string, labelId: string): Promise<void>;
  removeChatLabel(chatJid: string, labelId: string): Promise<void>;
}

/** A Meta message template to create, as the API takes it (Graph's fields; components as Meta defines them). */
export interface TemplateDraft {
  name: string;
  category: string;
  language: string;
  components: Record<string, unknown>[];
  allowCategoryChange?: boolean;
}

/** Meta message templates of the account's business (the Cloud API); sending one is a send (`templateMessage` content). */
export interface TemplatesModule {
  /** Submits a template for review; answers Meta's answer (`{id, status, category}`). */
  create(draft: TemplateDraft): Promise<Record<string, unknown>>;
  /** The business's templates as Meta lists them (every page). */
  find(): Promise<Record<string, unknown>[]>;
}

/**
 * One instance's connection to its messenger: the lifecycle, plus capability modules layered on it (as Baileys layers
 * its socket). Messaging is always there; an absent module is an operation the kind cannot do (the API answers
 * "Method not available on …" from the kind's capabilities, which name the same modules).
 */
export interface Connector {
  /** Connects using the stored session, or starts the linking flow (QR) when there is none. */
  start(): Promise<void>;
  /** Closes the live connection, keeping the session for the next start. */
  stop(): Promise<void>;
  /** Unlinks the account and forgets the session. */
  logout(): Promise<void>;
  state(): ConnectionState;
  /** The current QR code when the instance is waiting to be linked. */
  qr(): QrState | null;
  /** When the connector last heard from the messenger (traffic or keep-alive), for truthful health. */
  lastActivityAt?(): number | null;
  /** Why the connection is not open (the messenger cannot be reached, it refused…), while that holds; else null. */
  problem?(): ConnectionProblem | null;
  /** Why the connection is not open, when the connector knows (the instance's proxy cannot be reached…); else null. */
  stateReason?(): string | null;
  /**
   * The instance's proxy was set, changed or turned off: reconnect what goes through it (the connector reads the new
   * one with `ConnectorHost.proxy`). Absent: the connector reads the proxy at each request anyway.
   */
  proxyChanged?(): Promise<void>;
  readonly messaging: MessagingModule;
  readonly presence?: PresenceModule;
  readonly privacy?: PrivacyModule;
  readonly contacts?: ContactsModule;
  readonly profile?: ProfileModule;
  readonly chats?: ChatsModule;
  readonly blocking?: BlockingModule;
  readonly media?: MediaModule;
  readonly groups?: GroupsModule;
  readonly labels?: LabelsModule;
  readonly templates?: TemplatesModule;
}

/** A connection change as a connector reports it to its host. */
export interface ConnectionReport {
  state: ConnectionState;
  ownerJid?: string | null;
  profileName?: string | null;
  reason?: string | null;
  statusReason?: number;
}

/** What a connector reports back; the core stores it and emits the matching events. */
export interface ConnectorHost {
  connectionChanged(instanceId: string, change: ConnectionReport): Promise<void>;
  qrUpdated(instanceId: string, qr: QrState): Promise<void>;
  messageReceived(instanceId: string, message: InboundMessage): Promise<void>;
  /** A receipt for a message; `detail` says why when the status is ERROR. */
  messageStatus(instanceId: string, keyId: string, status: MessageStatus, detail?: string): Promise<void>;
  /** A stored message was deleted for everyone or edited on the messenger (by its sender, or by this account elsewhere). */
  messageChanged(instanceId: string, change: MessageChange): Promise<void>;
  presenceReceived(instanceId: string, chatJid: string, senderJid: string, presence: Presence): Promise<void>;
  /**
   * The account logged out: its stored session and session keys removed, with the close state and LOGOUT_INSTANCE, in
   * one unit, after every key write asked for before it (one still in flight must not bring keys back).
   */
  loggedOut(instanceId: string): Promise<void>;
  loadSession(instanceId: string): Promise<Record<string, unknown> | null>;
  saveSession(instanceId: string, data: Record<string, unknown> | null): Promise<void>;
  /** A label was created, changed or deleted, or added to or removed from a chat: stored, then announced if it changed anything. */
  labelChanged(instanceId: string, change: LabelChange): Promise<void>;
  /** Any other catalogue event the messenger reports (contacts, chats, groups, calls, labels, edits…), stored in the outbox. */
  eventOccurred(instanceId: string, event: EventName, data: unknown): Promise<void>;
  /** History sync: stores the messages (duplicates ignored) and emits one MESSAGES_SET. */
  messagesSynced(instanceId: string, messages: InboundMessage[]): Promise<void>;
  /** The instance as it is now (settings and privacy change while connected). */
  currentInstance(instanceId: string): Instance | undefined;
  /** The provider credential given at creation (WHATSAPP-BUSINESS: the Meta access token); never exposed by the API. */
  providerToken(instanceId: string): Promise<string | null>;
  /**
   * The proxy everything the instance sends out must go through (its password included: for building connections
   * only, never to be logged or answered); null when it has none or it is turned off.
   */
  proxy(instanceId: string): Promise<ProxySettings | null>;
  /** Encrypted media kept for a send (see OutboundMessage.mediaBlobId). */
  loadMedia(blobId: string): Promise<Buffer | null>;
  /** Many small session values (Signal keys), by type and id; a null value deletes. */
  sessionKeys: SessionKeyStore;
}

export interface SessionKeyStore {
  get(instanceId: string, type: string, ids: string[]): Promise<Record<string, string>>;
  set(instanceId: string, entries: { type: string; id: string; value: string | null }[]): Promise<void>;
  clear(instanceId: string): Promise<void>;
}

export type ConnectorFactory = (instance: Instance, host: ConnectorHost) => Connector;
