// Loads the Baileys-based connector on first use, so the service starts without loading baileys (about a second).
import {
  TransientConnectorError,
  type ChatsModule,
  type BlockingModule,
  type ConnectionProblem,
  type Connector,
  type ContactsModule,
  type GroupsModule,
  type LabelsModule,
  type MediaModule,
  type MessagingModule,
  type PresenceModule,
  type PrivacyModule,
  type ProfileModule,
  type QrState,
} from '../../core/connector.js';
import type { ConnectionState } from '../../core/instance.js';

/** The loaded connector: WhatsApp Web has every capability module. */
export type WebConnector = Connector & {
  presence: PresenceModule;
  privacy: PrivacyModule;
  contacts: ContactsModule;
  profile: ProfileModule;
  chats: ChatsModule;
  blocking: BlockingModule;
  media: MediaModule;
  groups: GroupsModule;
  labels: LabelsModule;
};

export class DeferredConnector implements Connector {
  private inner: WebConnector | null = null;
  private loading: Promise<WebConnector> | null = null;

  constructor(private readonly load: () => Promise<WebConnector>) {}

  private async loaded(): Promise<WebConnector> {
    if (this.inner) return this.inner;
    this.loading ??= this.load().then(
      (connector) => (this.inner = connector),
      (error: unknown) => {
        this.loading = null; // a later call may try again
        throw error;
      },
    );
    return this.loading;
  }

  private live(): WebConnector {
    if (!this.inner) throw new TransientConnectorError('the WhatsApp connection is not open');
    return this.inner;
  }

  async start(): Promise<void> {
    await (await this.loaded()).start();
  }

  async stop(): Promise<void> {
    await this.inner?.stop();
  }

  /** Also when never started: the stored session must be forgotten. */
  async logout(): Promise<void> {
    await (await this.loaded()).logout();
  }

  state(): ConnectionState {
    return this.inner?.state() ?? 'close';
  }

  qr(): QrState | null {
    return this.inner?.qr() ?? null;
  }

  lastActivityAt(): number | null {
    return this.inner?.lastActivityAt?.() ?? null;
  }

  problem(): ConnectionProblem | null {
    return this.inner?.problem?.() ?? null;
  }

  stateReason(): string | null {
    return this.inner?.stateReason?.() ?? null;
  }

  /** Never loaded: nothing goes through a proxy yet (the first start reads it). */
  async proxyChanged(): Promise<void> {
    await this.inner?.proxyChanged?.();
  }

  readonly messaging: MessagingModule = {
    send: (message) => this.live().messaging.send(message),
    markRead: (keys) => this.live().messaging.markRead(keys),
    uploadMedia: async (encrypted, kind) =>
      this.inner?.messaging.uploadMedia ? this.inner.messaging.uploadMedia(encrypted, kind) : { url: '', directPath: '' },
    revoke: async (target) => {
      const revoke = this.live().messaging.revoke;
      if (!revoke) throw new TransientConnectorError('the WhatsApp connection cannot delete messages');
      return revoke(target);
    },
    edit: async (target, content) => {
      const edit = this.live().messaging.edit;
      if (!edit) throw new TransientConnectorError('the WhatsApp connection cannot edit messages');
      return edit(target, content);
    },
  };

  readonly blocking: BlockingModule = {
    updateBlockStatus: (jid, action) => this.live().blocking.updateBlockStatus(jid, action),
  };

  /** Media downloads need no connection: loaded on first use. */
  readonly media: MediaModule = {
    download: async (node, mediaType, maxBytes) => (await this.loaded()).media.download(node, mediaType, maxBytes),
  };

  readonly presence: PresenceModule = {
    sendPresence: (chatJid, presence) => this.live().presence.sendPresence(chatJid, presence),
    setOwnPresence: (presence) => this.live().presence.setOwnPresence(presence),
  };

  readonly contacts: ContactsModule = {
    onWhatsApp: (requests) => this.live().contacts.onWhatsApp(requests),
    alternateAddress: (jid) => this.inner?.contacts.alternateAddress?.(jid) ?? null,
  };

  readonly privacy: PrivacyModule = {
    updatePrivacy: (settings) => this.live().privacy.updatePrivacy(settings),
    fetchPrivacy: async () => {
      const privacy = this.live().privacy;
      if (!privacy.fetchPrivacy) throw new TransientConnectorError('the WhatsApp connection cannot read privacy settings');
      return privacy.fetchPrivacy();
    },
  };

  readonly profile: ProfileModule = {
    pictureUrl: (jid) => this.live().profile.pictureUrl(jid),
    fetch: (jid) => this.live().profile.fetch(jid),
    setName: (name) => this.live().profile.setName(name),
    setStatus: (text) => this.live().profile.setStatus(text),
    setPicture: (jpeg) => this.live().profile.setPicture(jpeg),
    removePicture: () => this.live().profile.removePicture(),
    businessProfile: (jid) => this.live().profile.businessProfile(jid),
  };

  readonly chats: ChatsModule = {
    archive: (jid, archive, lastMessage) => this.live().chats.archive(jid, archive, lastMessage),
    markUnread: (jid, lastMessage) => this.live().chats.markUnread(jid, lastMessage),
  };

  /** Before the socket exists, every group operation fails as transient (a 503: try again shortly). */
  readonly groups: GroupsModule = {
    create: async (subject, participants) => this.live().groups.create(subject, participants),
    metadata: async (jid) => this.live().groups.metadata(jid),
    participating: async () => this.live().groups.participating(),
    pictureUrl: async (jid) => this.live().groups.pictureUrl(jid),
    updateSubject: async (jid, subject) => this.live().groups.updateSubject(jid, subject),
    updateDescription: async (jid, description) => this.live().groups.updateDescription(jid, description),
    updatePicture: async (jid, jpeg) => this.live().groups.updatePicture(jid, jpeg),
    inviteCode: async (jid) => this.live().groups.inviteCode(jid),
    revokeInvite: async (jid) => this.live().groups.revokeInvite(jid),
    inviteInfo: async (code) => this.live().groups.inviteInfo(code),
    acceptInvite: async (code) => this.live().groups.acceptInvite(code),
    updateParticipants: async (jid, participants, action) => this.live().groups.updateParticipants(jid, participants, action),
    updateSetting: async (jid, setting) => this.live().groups.updateSetting(jid, setting),
    toggleEphemeral: async (jid, expiration) => this.live().groups.toggleEphemeral(jid, expiration),
    leave: async (jid) => this.live().groups.leave(jid),
  };

  readonly labels: LabelsModule = {
    addChatLabel: (jid, labelId) => this.live().labels.addChatLabel(jid, labelId),
    removeChatLabel: (jid, labelId) => this.live().labels.removeChatLabel(jid, labelId),
  };
}
