// The part of a Baileys socket the connector uses: tests stand a fake one in at exactly this boundary.
import { makeWASocket } from 'baileys';
import type {
  BaileysEventMap,
  BinaryNode,
  ChatModification,
  GroupMetadata,
  MessageRelayOptions,
  ParticipantAction,
  proto,
  UserFacingSocketConfig,
  WAMediaUpload,
  WAMediaUploadFunction,
  WAMessageKey,
  WAPresence,
  WAPrivacyGroupAddValue,
  WAPrivacyOnlineValue,
  WAPrivacyValue,
  WAReadReceiptsValue,
} from 'baileys';

interface WaEvents {
  on<T extends keyof BaileysEventMap>(event: T, listener: (arg: BaileysEventMap[T]) => void): void;
}

export interface WaSocket {
  ev: WaEvents;
  /** The websocket; every decoded frame is emitted as `frame` (used to know when WhatsApp was last heard). */
  ws: { on(event: 'frame', listener: (frame: unknown) => void): unknown };
  readonly user?: { id: string; name?: string; notify?: string; lid?: string } | undefined;
  relayMessage(jid: string, message: proto.IMessage, options: MessageRelayOptions): Promise<string>;
  sendPresenceUpdate(type: WAPresence, toJid?: string): Promise<void>;
  onWhatsApp(...phoneNumber: string[]): Promise<{ jid: string; exists: boolean }[] | undefined>;
  readMessages(keys: WAMessageKey[]): Promise<void>;
  updateReadReceiptsPrivacy(value: WAReadReceiptsValue): Promise<void>;
  updateProfilePicturePrivacy(value: WAPrivacyValue): Promise<void>;
  updateStatusPrivacy(value: WAPrivacyValue): Promise<void>;
  updateOnlinePrivacy(value: WAPrivacyOnlineValue): Promise<void>;
  updateLastSeenPrivacy(value: WAPrivacyValue): Promise<void>;
  updateGroupsAddPrivacy(value: WAPrivacyGroupAddValue): Promise<void>;
  fetchPrivacySettings(force?: boolean): Promise<{ [setting: string]: string }>;
  profilePictureUrl(jid: string, type?: 'preview' | 'image'): Promise<string | undefined>;
  fetchStatus(...jids: string[]): Promise<{ id: string; [protocol: string]: unknown }[] | undefined>;
  getBusinessProfile(jid: string): Promise<unknown>;
  updateProfileName(name: string): Promise<void>;
  updateProfileStatus(status: string): Promise<void>;
  chatModify(mod: ChatModification, jid: string): Promise<void>;
  addChatLabel(jid: string, labelId: string): Promise<void>;
  removeChatLabel(jid: string, labelId: string): Promise<void>;
  updateProfilePicture(jid: string, content: WAMediaUpload): Promise<void>;
  removeProfilePicture(jid: string): Promise<void>;
  updateBlockStatus(jid: string, action: 'block' | 'unblock'): Promise<void>;
  waUploadToServer: WAMediaUploadFunction;
  requestPairingCode(phoneNumber: string): Promise<string>;
  rejectCall(callId: string, callFrom: string): Promise<void>;
  groupMetadata(jid: string): Promise<GroupMetadata>;
  groupCreate(subject: string, participants: string[]): Promise<GroupMetadata>;
  groupUpdateSubject(jid: string, subject: string): Promise<void>;
  groupUpdateDescription(jid: string, description?: string): Promise<void>;
  groupInviteCode(jid: string): Promise<string | undefined>;
  groupRevokeInvite(jid: string): Promise<string | undefined>;
  groupGetInviteInfo(code: string): Promise<GroupMetadata>;
  groupAcceptInvite(code: string): Promise<string | undefined>;
  groupFetchAllParticipating(): Promise<{ [jid: string]: GroupMetadata }>;
  groupParticipantsUpdate(
    jid: string,
    participants: string[],
    action: ParticipantAction,
  ): Promise<{ status: string; jid: string | undefined; content: BinaryNode }[]>;
  groupSettingUpdate(jid: string, setting: 'announcement' | 'not_announcement' | 'locked' | 'unlocked'): Promise<void>;
  groupToggleEphemeral(jid: string, ephemeralExpiration: number): Promise<void>;
  groupLeave(jid: string): Promise<void>;
  logout(message?: string): Promise<void>;
  end(error: Error | undefined): Promise<void>;
  signalRepository: { lidMapping: { getPNForLID(lid: string): Promise<string | null> } };
}

/** Builds a socket from Baileys' configuration; the default is Baileys' makeWASocket. */
export type SocketFactory = (config: UserFacingSocketConfig) => WaSocket;

/** Baileys' own socket. */
export const baileysSocketFactory: SocketFactory = (config) => makeWASocket(config);
