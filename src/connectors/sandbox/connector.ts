// The SANDBOX connector of one instance: its link state, its QR flow, and its side of the network.
import type { Logger } from '../../platform/logger.js';
import { invalidInput } from '../../core/errors.js';
import type { ConnectionState, Instance } from '../../core/instance.js';
import {
  TransientConnectorError,
  type ChatsModule,
  type BlockAction,
  type BlockingModule,
  type Connector,
  type ConnectorHost,
  type ContactsModule,
  type GroupsModule,
  type LabelsModule,
  type NumberCheck,
  type OwnPresence,
  type MediaModule,
  type MessageKeyRef,
  type MessagingModule,
  type OutboundMessage,
  type PresenceModule,
  type PrivacyModule,
  type ProfileInfo,
  type ProfileModule,
  type Presence,
  type QrState,
} from '../../core/connector.js';
import type { LinkCodes } from './codes.js';
import type { SandboxGroups } from './groups.js';
import type { SandboxLabels } from './labels.js';
import type { UploadedMedia } from './media-store.js';
import type { SandboxPictureStore } from './picture-store.js';
import { checkPrivacy } from './privacy.js';
import { QrFlow } from './qr-flow.js';
import { newKeyId } from './ids.js';
import type { LinkedParty, SentChange } from './router.js';
import { readSession, sessionData, type SandboxSession } from './session.js';

/** What a connector needs from the network it lives on. */
export interface NetworkSide {
  host: ConnectorHost;
  codes: LinkCodes;
  qr: { ttlMs: number; limit: number; render: (code: string) => Promise<string> };
  /** Registers the connector as the live one of its instance (on start). */
  attach(connector: SandboxConnector): void;
  /** Unregisters it (on stop and logout) when it is still the live one. */
  detach(connector: SandboxConnector): void;
  /** The instance went open here (linked and live): the other nodes of a fleet learn it, and letters for it come. */
  opened(party: LinkedParty): Promise<void>;
  /** The instance's connector here closed (after being open). */
  closed(instanceId: string): Promise<void>;
  send(sender: LinkedParty, message: OutboundMessage): Promise<void>;
  markRead(readerId: string, keys: { remoteJid: string; keyId: string }[]): Promise<void>;
  sendPresence(sender: LinkedParty, chatJid: string, presence: Presence): Promise<void>;
  setOwnPresence(sender: LinkedParty, presence: OwnPresence): Promise<void>;
  onWhatsApp(requests: { number: string; jid: string }[]): Promise<NumberCheck[]>;
  alternateAddress(jid: string): string | null;
  uploadMedia(encrypted: Buffer, kind: string): Promise<UploadedMedia>;
  /** The profile of the sandbox account at `jid` as others see it, or null when no sandbox instance holds it. */
  profileOf(jid: string): Promise<ProfileInfo | null>;
  /** Where profile pictures are kept and served. */
  pictures: Pick<SandboxPictureStore, 'save' | 'remove'>;
  /** Delivers a deletion or an edit of the sender's message to its recipient. */
  change(sender: LinkedParty, target: MessageKeyRef, change: SentChange): Promise<void>;
  updateBlockStatus(blockerId: string, jid: string, action: BlockAction): Promise<void>;
  /** The labels of each account. */
  labels: Pick<SandboxLabels, 'all' | 'has'>;
  /** The plain bytes of a media node of the sandbox network. */
  downloadMedia(node: Record<string, unknown>, mediaType: string, maxBytes: number): Promise<Buffer>;
  /** The network's groups. */
  groups: SandboxGroups;
}

const QR_LIMIT_REASON = 'QR code limit reached';

export class SandboxConnector implements Connector {
  readonly instanceId: string;
  private status: ConnectionState = 'close';
  private owner: SandboxSession | null = null;
  private flow: QrFlow | null = null;
  private running = false;
  /** Bumped by every start, stop, logout and link, so work that awaited across one of them stands down. */
  private epoch = 0;
  /** When the network last carried something of this instance (connection, sends, receipts, presence). */
  private lastActivity: number | null = null;
  /** What the connector can do, made on first use: most of an instance's modules are never used between restarts. */
  private readonly modules: {
    messaging?: MessagingModule;
    blocking?: BlockingModule;
    media?: MediaModule;
    presence?: PresenceModule;
    contacts?: ContactsModule;
    privacy?: PrivacyModule;
    profile?: ProfileModule;
    chats?: ChatsModule;
    groups?: GroupsModule;
    labels?: LabelsModule;
  } = {};

  private readonly instanceName: string;
  private log: Logger | undefined;

  /** `parentLogger`: its lines carry the instance name (a child logger, made at the first line). */
  constructor(
    instance: Instance,
    private readonly network: NetworkSide,
    private readonly parentLogger: Logger,
  ) {
    this.instanceId = instance.id;
    this.instanceName = instance.name;
  }

  private get logger(): Logger {
    this.log ??= this.parentLogger.child({ instance: this.instanceName });
    return this.log;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    const epoch = ++this.epoch;
    this.network.attach(this);
    try {
      const session = readSession(await this.network.host.loadSession(this.instanceId));
      if (epoch !== this.epoch) return;
      if (session) await this.open(session);
      else await this.beginQr(epoch);
    } catch (error) {
      // A failed start leaves the connector closed, so the next start tries again.
      if (epoch === this.epoch) this.shutDown();
      throw error;
    }
  }

  async stop(): Promise<void> {
    this.shutDown();
    this.network.detach(this);
  }

  async logout(): Promise<void> {
    const picture = readSession(await this.network.host.loadSession(this.instanceId))?.pictureFile;
    this.shutDown();
    this.network.detach(this);
    // The session goes in the same unit as the logout's state and events (a crash between two units left the account
    // unlinked with no event); the picture and codes after it (a crash there leaves a file behind, nothing more).
    await this.network.host.loggedOut(this.instanceId);
    if (picture) await this.network.pictures.remove(picture);
    await this.network.codes.removeAllOf(this.instanceId);
    this.logger.info('sandbox instance logged out');
  }

  state(): ConnectionState {
    return this.status;
  }

  qr(): QrState | null {
    return this.flow?.current() ?? null;
  }

  lastActivityAt(): number | null {
    return this.lastActivity;
  }

  get messaging(): MessagingModule {
    this.modules.messaging ??= {
      send: async (message) => {
        await this.network.send(this.partyOrThrow(), message);
        this.lastActivity = Date.now();
      },

      /** The network takes each message in order as it is handed over; the batch is done when all were recorded. */
      sendMany: async (messages) => {
        const party = this.partyOrThrow();
        const results = await Promise.allSettled(messages.map((message) => this.network.send(party, message)));
        this.lastActivity = Date.now();
        const failed = results.findIndex((result) => result.status === 'rejected');
        if (failed === -1) return { sent: messages.length };
        return { sent: failed, error: (results[failed] as PromiseRejectedResult).reason };
      },

      markRead: async (keys) => {
        this.partyOrThrow();
        await this.network.markRead(this.instanceId, keys);
        this.lastActivity = Date.now();
      },

      /** A group that does not let this account write (not a member, announcement mode) refuses the send at once. */
      check: async (message) => {
        const party = this.linked();
        if (!party || !message.remoteJid.endsWith('@g.us')) return;
        const refusal = await this.network.groups.refusalFor(party, message.remoteJid);
        if (refusal !== null) throw invalidInput(refusal);
      },

      /** Media goes to the sandbox "CDN"; no link needed, as sends are prepared before an instance links. */
      uploadMedia: (encrypted, kind): Promise<UploadedMedia> => this.network.uploadMedia(encrypted, kind),

      revoke: async (target) => {
        const keyId = newKeyId();
        const timestampMs = Date.now();
        await this.network.change(this.partyOrThrow(), target, { kind: 'revoke' });
        this.lastActivity = timestampMs;
        return { keyId, timestampMs };
      },

      edit: async (target, content) => {
        const keyId = newKeyId();
        const timestampMs = Date.now();
        await this.network.change(this.partyOrThrow(), target, { kind: 'edit', content, timestampMs });
        this.lastActivity = timestampMs;
        return { keyId, timestampMs };
      },
    };
    return this.modules.messaging;
  }

  /** Blocks are kept by the network (in the store): a blocked account's messages stop at the server. */
  get blocking(): BlockingModule {
    this.modules.blocking ??= {
      updateBlockStatus: async (jid, action) => {
        this.partyOrThrow();
        await this.network.updateBlockStatus(this.instanceId, jid, action);
      },
    };
    return this.modules.blocking;
  }

  /** Media of the sandbox network is in its media store; no link needed to read it. */
  get media(): MediaModule {
    this.modules.media ??= {
      download: (node, mediaType, maxBytes) => this.network.downloadMedia(node, mediaType, maxBytes),
    };
    return this.modules.media;
  }

  get presence(): PresenceModule {
    this.modules.presence ??= {
      sendPresence: async (chatJid, presence) => {
        const party = this.linked();
        // Presence is momentary: when not connected there is nobody to show it to.
        if (party) {
          await this.network.sendPresence(party, chatJid, presence);
          this.lastActivity = Date.now();
        }
      },
      setOwnPresence: async (presence) => {
        await this.network.setOwnPresence(this.partyOrThrow(), presence);
        this.lastActivity = Date.now();
      },
    };
    return this.modules.presence;
  }

  get contacts(): ContactsModule {
    this.modules.contacts ??= {
      onWhatsApp: async (requests) => {
        this.partyOrThrow();
        return this.network.onWhatsApp(requests);
      },
      alternateAddress: (jid) => this.network.alternateAddress(jid),
    };
    return this.modules.contacts;
  }

  get privacy(): PrivacyModule {
    this.modules.privacy ??= {
      // The core keeps the values on the instance; the network reads them from there (read receipts).
      updatePrivacy: async (settings) => checkPrivacy(settings),
    };
    return this.modules.privacy;
  }

  /**
   * The own profile lives in the session (stored, so it survives restarts); later messages carry the new name as
   * their pushName. A picture is a file of the sandbox picture store, served at a URL everyone sees. Sandbox accounts
   * are never business accounts.
   */
  get profile(): ProfileModule {
    this.modules.profile ??= {
      pictureUrl: async (jid) => (await this.network.profileOf(jid))?.picture ?? null,
      fetch: (jid) => this.network.profileOf(jid),
      setName: (name) => this.changeProfile({ profileName: name }),
      setStatus: (text) => this.changeProfile({ profileStatus: text, statusSetAt: new Date().toISOString() }),
      setPicture: async (jpeg) => {
        const fileName = await this.network.pictures.save(jpeg);
        await this.replacePicture(fileName).catch(async (error: unknown) => {
          await this.network.pictures.remove(fileName);
          throw error;
        });
      },
      removePicture: () => this.replacePicture(undefined),
      businessProfile: async () => null,
    };
    return this.modules.profile;
  }

  /**
   * A chat's archived and unread marks are the core's chats row (written once this answers): the sandbox account has
   * no chat list of its own, it only has to be linked.
   */
  get chats(): ChatsModule {
    this.modules.chats ??= {
      archive: async () => {
        this.partyOrThrow();
      },
      markUnread: async () => {
        this.partyOrThrow();
      },
    };
    return this.modules.chats;
  }
  /** Groups live on the network (in the store), one for all sandbox instances; this account acts in them. */
  get groups(): GroupsModule {
    this.modules.groups ??= {
      create: (subject, participants) => this.network.groups.create(this.partyOrThrow(), subject, participants),
      metadata: (jid) => this.network.groups.metadata(this.partyOrThrow(), jid),
      participating: () => this.network.groups.participating(this.partyOrThrow()),
      pictureUrl: (jid) => this.network.groups.pictureUrl(jid),
      updateSubject: (jid, subject) => this.network.groups.updateSubject(this.partyOrThrow(), jid, subject),
      updateDescription: (jid, description) => this.network.groups.updateDescription(this.partyOrThrow(), jid, description),
      updatePicture: (jid, jpeg) => this.network.groups.updatePicture(this.partyOrThrow(), jid, jpeg),
      inviteCode: (jid) => this.network.groups.inviteCode(this.partyOrThrow(), jid),
      revokeInvite: (jid) => this.network.groups.revokeInvite(this.partyOrThrow(), jid),
      inviteInfo: (code) => this.network.groups.inviteInfo(code),
      acceptInvite: (code) => this.network.groups.acceptInvite(this.partyOrThrow(), code),
      updateParticipants: (jid, participants, action) => this.network.groups.updateParticipants(this.partyOrThrow(), jid, participants, action),
      updateSetting: (jid, setting) => this.network.groups.updateSetting(this.partyOrThrow(), jid, setting),
      toggleEphemeral: (jid, expiration) => this.network.groups.toggleEphemeral(this.partyOrThrow(), jid, expiration),
      leave: (jid) => this.network.groups.leave(this.partyOrThrow(), jid),
    };
    return this.modules.groups;
  }

  /**
   * A chat's labels are the core's chats row (written once this answers); the account's labels are the network's: a
   * label it does not have is refused, as WhatsApp would.
   */
  get labels(): LabelsModule {
    this.modules.labels ??= {
      addChatLabel: (_jid, labelId) => this.checkLabel(labelId),
      removeChatLabel: (_jid, labelId) => this.checkLabel(labelId),
    };
    return this.modules.labels;
  }

  private async checkLabel(labelId: string): Promise<void> {
    this.partyOrThrow();
    if (!(await this.network.labels.has(this.instanceId, labelId))) {
      throw invalidInput(
        `label ${labelId} does not exist on this account: GET /messenger/label/findLabels/{instance} lists its labels, POST /messenger/sandbox/label/{instance} creates one`,
      );
    }
  }

  /** Points the session at another picture file (or none), then removes the file it had. */
  private async replacePicture(fileName: string | undefined): Promise<void> {
    const previous = this.owner?.pictureFile;
    await this.changeProfile({ pictureFile: fileName });
    if (previous && previous !== fileName) await this.network.pictures.remove(previous);
  }

  /** The linked account's session (its profile included), while open. */
  session(): SandboxSession | null {
    return this.status === 'open' ? this.owner : null;
  }

  private async changeProfile(change: Partial<SandboxSession>): Promise<void> {
    const owner = this.owner;
    if (this.status !== 'open' || !owner) throw new TransientConnectorError('instance is not connected to the sandbox network');
    const next = { ...owner, ...change };
    await this.network.host.saveSession(this.instanceId, sessionData(next));
    if (this.owner === owner) this.owner = next;
  }

  /** Who this instance is on the network while it is live and linked, else null. */
  linked(): LinkedParty | null {
    if (this.status !== 'open' || !this.owner) return null;
    return { instanceId: this.instanceId, ownerJid: this.owner.ownerJid, profileName: this.owner.profileName };
  }

  /** Whether start() ran and no stop or logout followed (the connector would go open on a link). */
  isRunning(): boolean {
    return this.running;
  }

  /** The session was just saved by a scan or an auto-link: end the QR flow and go open. */
  async link(session: SandboxSession): Promise<void> {
    this.epoch++;
    this.endQr();
    await this.network.codes.removeAllOf(this.instanceId);
    this.logger.info({ ownerJid: session.ownerJid }, 'sandbox instance linked');
    await this.open(session);
  }

  /** Ends timers without events; used when a newer connector replaces this one. */
  dispose(): void {
    this.shutDown();
  }

  private async open(session: SandboxSession): Promise<void> {
    this.owner = session;
    this.status = 'open';
    this.lastActivity = Date.now();
    await this.network.host.connectionChanged(this.instanceId, {
      state: 'open',
      ownerJid: session.ownerJid,
      profileName: session.profileName,
    });
    // As WhatsApp's first sync after connecting: the account's labels as they are (stored, nothing announced).
    await this.network.host.labelChanged(this.instanceId, { kind: 'sync', labels: await this.network.labels.all(this.instanceId) });
    const party = this.linked();
    if (party && this.owner === session) await this.network.opened(party);
  }

  private async beginQr(epoch: number): Promise<void> {
    const { host, codes, qr } = this.network;
    const flow: QrFlow = new QrFlow({
      instanceId: this.instanceId,
      codes,
      render: qr.render,
      ttlMs: qr.ttlMs,
      limit: qr.limit,
      onQr: (state) => host.qrUpdated(this.instanceId, state),
      onLimit: (): Promise<void> => this.limitReached(flow),
      onError: (error) => this.qrFailed(flow, error),
    });
    this.flow = flow;
    this.status = 'connecting';
    // Connecting first, then the QR (the order Evolution reports them in).
    await host.connectionChanged(this.instanceId, { state: 'connecting' });
    if (epoch !== this.epoch) return;
    await flow.begin();
  }

  private async limitReached(flow: QrFlow): Promise<void> {
    if (this.flow !== flow) return;
    this.flow = null;
    this.status = 'close';
    this.running = false;
    this.logger.info('sandbox QR code limit reached');
    await this.network.host.connectionChanged(this.instanceId, {
      state: 'close',
      reason: QR_LIMIT_REASON,
      statusReason: 428,
    });
  }

  private qrFailed(flow: QrFlow, error: unknown): void {
    this.logger.error({ err: error }, 'sandbox QR code refresh failed');
    if (this.flow !== flow) return;
    this.shutDown();
    this.network.host
      .connectionChanged(this.instanceId, { state: 'close', reason: 'QR code could not be refreshed', statusReason: 500 })
      .catch((reportError: unknown) => this.logger.error({ err: reportError }, 'reporting the QR failure failed'));
  }

  private partyOrThrow(): LinkedParty {
    const party = this.linked();
    if (!party) throw new TransientConnectorError('instance is not connected to the sandbox network');
    return party;
  }

  private endQr(): void {
    this.flow?.end();
    this.flow = null;
  }

  private shutDown(): void {
    if (this.status === 'open') {
      this.network.closed(this.instanceId).catch((error: unknown) => this.logger.warn({ err: error }, 'sandbox instance not marked closed in the store'));
    }
    this.epoch++;
    this.endQr();
    this.running = false;
    this.status = 'close';
    this.owner = null;
  }
}
