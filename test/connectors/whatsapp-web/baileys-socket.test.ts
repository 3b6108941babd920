// The WhatsApp Web connector at the Baileys socket boundary: recorded Baileys events in, sends and settings out.
import { EventEmitter } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { proto, type BaileysEventMap, type UserFacingSocketConfig, type WAMediaUploadFunction, type WAMessageKey } from 'baileys';
import { loadConfig } from '../../../src/platform/config.js';
import { silentLogger } from '../../../src/platform/logger.js';
import { openStore, type Store } from '../../../src/platform/store/db.js';
import { createServices, type Services } from '../../../src/services.js';
import { inUnit } from '../../../src/platform/store/unit.js';
import { defaultSettings, type Instance, type PrivacySettings, type Settings } from '../../../src/core/instance.js';
import { ProviderError, TransientConnectorError, type Connector, type InboundMessage, type OutboundMessage } from '../../../src/core/connector.js';
import { statusOf } from '../../../src/platform/http/error-envelope.js';
import { mediaContent, pollContent, statusTextContent, textContent } from '../../../src/messages/compose.js';
import { prepareMedia } from '../../../src/media/prepare.js';
import { buttonsContent, imageHeader } from '../../../src/messages/buttons.js';
import { encryptMedia } from '../../../src/media/crypto.js';
import { createWhatsAppWebFactory, waWebDefaults, type WaSocket } from '../../../src/connectors/whatsapp-web/index.js';
import { encryptWithKey } from '../../../src/media/crypto.js';
import { delayFor } from '../../../src/platform/util/backoff.js';
import { classifyClose } from '../../../src/connectors/whatsapp-web/disconnect.js';
import { statusFromBaileys } from '../../../src/connectors/whatsapp-web/status.js';
import { RecordingHost } from '../../support/recording-host.js';
import { sine, testVideo } from '../../support/media-fixtures.js';
import { Ffmpeg } from '../../../src/media/ffmpeg.js';
import { prepareVoiceNote } from '../../../src/media/voice-note.js';
import { prepareRoundVideo } from '../../../src/media/round-video.js';
import { ptvContent, voiceNoteContent } from '../../../src/messages/compose-voice.js';
import { sendAfterTyping } from '../../../src/messages/connector-handoff.js';

// ---------------------------------------------------------------------------------------------------------------
// A fake Baileys socket: records what the connector asks of it, emits what a test gives it

const OWNER = '5511999990000';

/** An error as Baileys raises them (a Boom: `output.statusCode`), without depending on @hapi/boom here. */
function boom(message: string, statusCode: number): Error {
  return Object.assign(new Error(message), { isBoom: true, output: { statusCode } });
}

class FakeSocket implements WaSocket {
  readonly emitter = new EventEmitter();
  readonly ev = {
    on: <T extends keyof BaileysEventMap>(event: T, listener: (arg: BaileysEventMap[T]) => void) => {
      this.emitter.on(event, listener);
    },
  };
  readonly ws = new EventEmitter();
  user: { id: string; name?: string } | undefined;
  readonly calls: { method: string; args: unknown[] }[] = [];
  readonly relayed: { jid: string; message: proto.IMessage; options: { messageId?: string; statusJidList?: string[] } }[] = [];
  readonly uploads: { bytes: Buffer; mediaType: string; fileEncSha256B64: string }[] = [];
  relayError: unknown;
  ended = false;
  readonly lids = new Map<string, string>();
  groupParticipants = [{ id: '5511911110001@s.whatsapp.net' }, { id: '5511911110002@s.whatsapp.net' }];

  constructor(readonly config: UserFacingSocketConfig) {}

  emit<T extends keyof BaileysEventMap>(event: T, data: BaileysEventMap[T]): void {
    this.emitter.emit(event, data);
  }

  open(): void {
    this.user = { id: `${OWNER}:3@s.whatsapp.net`, name: 'Front desk' };
    this.emit('connection.update', { connection: 'open' });
  }

  close(statusCode: number, message = 'closed'): void {
    this.emit('connection.update', { connection: 'close', lastDisconnect: { error: boom(message, statusCode), date: new Date() } });
  }

  of(method: string): unknown[][] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }

  private record(method: string, ...args: unknown[]): void {
    this.calls.push({ method, args });
  }

  async relayMessage(jid: string, message: proto.IMessage, options: { messageId?: string; statusJidList?: string[] }): Promise<string> {
    if (this.relayError) throw this.relayError;
    this.relayed.push({ jid, message, options });
    return options.messageId ?? 'generated';
  }
  async sendPresenceUpdate(type: string, toJid?: string) {
    this.record('sendPresenceUpdate', type, toJid);
  }
  async readMessages(keys: WAMessageKey[]) {
    this.record('readMessages', keys);
  }
  /** Accounts WhatsApp knows, by their own spelling (a Brazilian mobile without its ninth digit). */
  readonly accounts = ['551188887777@s.whatsapp.net', '5511911110001@s.whatsapp.net', '5511911110002@s.whatsapp.net'];
  /** The @lid addresses WhatsApp answers beside accounts' phone ones (Baileys 7's `lid` field), by phone address. */
  readonly accountLids = new Map<string, string>();
  async onWhatsApp(...phoneNumber: string[]) {
    this.record('onWhatsApp', ...phoneNumber);
    return this.accounts.map((jid) => ({ jid, exists: true, ...(this.accountLids.has(jid) ? { lid: this.accountLids.get(jid) } : {}) }));
  }
  async updateReadReceiptsPrivacy(value: string) {
    this.record('updateReadReceiptsPrivacy', value);
  }
  async updateProfilePicturePrivacy(value: string) {
    this.record('updateProfilePicturePrivacy', value);
  }
  async updateStatusPrivacy(value: string) {
    this.record('updateStatusPrivacy', value);
  }
  async updateOnlinePrivacy(value: string) {
    this.record('updateOnlinePrivacy', value);
  }
  async updateLastSeenPrivacy(value: string) {
    this.record('updateLastSeenPrivacy', value);
  }
  async updateGroupsAddPrivacy(value: string) {
    this.record('updateGroupsAddPrivacy', value);
  }
  async fetchPrivacySettings(force?: boolean) {
    this.record('fetchPrivacySettings', force);
    return { readreceipts: 'all', profile: 'contacts', status: 'contacts', online: 'all', last: 'none', groupadd: 'all', calladd: 'all' };
  }
  async profilePictureUrl(jid: string, type?: string) {
    this.record('profilePictureUrl', jid, type);
    if (jid.startsWith('5511911110009')) throw boom('item-not-found', 404);
    return `https://pps.whatsapp.net/v/${jid.split('@')[0]}.jpg`;
  }
  async fetchStatus(...jids: string[]) {
    return jids.map((id) => ({ id, status: { status: 'Busy', setAt: new Date(1_700_000_000_000) } }));
  }
  async getBusinessProfile(jid: string) {
    if (!jid.startsWith('5511911110002')) return undefined;
    return {
      wid: jid,
      description: 'Shop',
      website: ['https://shop.example'],
      email: 'shop@example.com',
      category: 'Retail',
      business_hours: { timezone: 'America/Sao_Paulo', business_config: [{ day_of_week: 'mon', mode: 'open_24h' }] },
    };
  }
  async updateProfileName(name: string) {
    this.record('updateProfileName', name);
  }
  async updateProfileStatus(status: string) {
    this.record('updateProfileStatus', status);
  }
  async chatModify(mod: unknown, jid: string) {
    this.record('chatModify', mod, jid);
  }
  labelError: unknown;
  async addChatLabel(jid: string, labelId: string) {
    this.record('addChatLabel', jid, labelId);
    if (this.labelError) throw this.labelError;
  }
  async removeChatLabel(jid: string, labelId: string) {
    this.record('removeChatLabel', jid, labelId);
  }
  async updateProfilePicture(jid: string, content: unknown) {
    this.record('updateProfilePicture', jid, content);
  }
  async removeProfilePicture(jid: string) {
    this.record('removeProfilePicture', jid);
  }
  blockError: unknown;
  async updateBlockStatus(jid: string, action: string) {
    if (this.blockError) throw this.blockError;
    this.record('updateBlockStatus', jid, action);
  }
  waUploadToServer: WAMediaUploadFunction = async (path, opts) => {
    this.uploads.push({ bytes: await readFile(path), mediaType: opts.mediaType, fileEncSha256B64: opts.fileEncSha256B64 });
    return { mediaUrl: 'https://mmg.whatsapp.net/v/t62.7119-24/uploaded.enc', directPath: '/v/t62.7119-24/uploaded.enc' };
  };
  pairingError: unknown;
  async requestPairingCode(phone: string) {
    this.record('requestPairingCode', phone);
    if (this.pairingError) throw this.pairingError;
    return 'WXYZ2345';
  }
  async rejectCall(id: string, from: string) {
    this.record('rejectCall', id, from);
  }
  /** Group addresses whose metadata was fetched, in order (what the connector's cache saves). */
  readonly metadataFetches: string[] = [];
  groupError: unknown;
  async groupMetadata(jid: string) {
    this.metadataFetches.push(jid);
    if (this.groupError) throw this.groupError;
    return { id: jid, subject: 'Team', owner: undefined, participants: this.groupParticipants };
  }
  async groupCreate(subject: string, participants: string[]) {
    this.record('groupCreate', subject, participants);
    return {
      id: GROUP,
      subject,
      owner: LID,
      ownerPn: `${OWNER}@s.whatsapp.net`,
      creation: 1735689600,
      participants: [{ id: LID, phoneNumber: `${OWNER}@s.whatsapp.net`, admin: 'superadmin' as const }, ...participants.map((id) => ({ id, admin: null }))],
    };
  }
  async groupUpdateSubject(jid: string, subject: string) {
    if (this.groupError) throw this.groupError;
    this.record('groupUpdateSubject', jid, subject);
  }
  async groupUpdateDescription(jid: string, description?: string) {
    this.record('groupUpdateDescription', jid, description);
  }
  async groupInviteCode(jid: string) {
    this.record('groupInviteCode', jid);
    return 'AbCdEfGhIjKlMnOpQrStUv';
  }
  async groupRevokeInvite(jid: string) {
    this.record('groupRevokeInvite', jid);
    return 'ZyXwVuTsRqPoNmLkJiHgFe';
  }
  async groupGetInviteInfo(code: string) {
    this.record('groupGetInviteInfo', code);
    if (code === 'NoSuchInviteCode000000') throw boom('item-not-found', 404);
    return { id: GROUP, subject: 'Team', owner: undefined, size: 40, participants: [] };
  }
  async groupAcceptInvite(code: string) {
    this.record('groupAcceptInvite', code);
    return GROUP;
  }
  async groupFetchAllParticipating() {
    this.record('groupFetchAllParticipating');
    return { [GROUP]: { id: GROUP, subject: 'Team', owner: undefined, announce: true, participants: this.groupParticipants } };
  }
  async groupParticipantsUpdate(jid: string, participants: string[], action: string) {
    this.record('groupParticipantsUpdate', jid, participants, action);
    return participants.map((p, i) => ({ status: i === 0 ? '200' : '409', jid: p, content: { tag: 'participant', attrs: { jid: p } } }));
  }
  async groupSettingUpdate(jid: string, setting: string) {
    this.record('groupSettingUpdate', jid, setting);
  }
  async groupToggleEphemeral(jid: string, expiration: number) {
    this.record('groupToggleEphemeral', jid, expiration);
  }
  async groupLeave(jid: string) {
    this.record('groupLeave', jid);
  }
  async logout() {
    this.record('logout');
    this.close(401, 'Intentional Logout');
  }
  async end(error: Error | undefined) {
    if (this.ended) return;
    this.ended = true;
    this.emit('connection.update', { connection: 'close', lastDisconnect: { error, date: new Date() } });
  }
  readonly signalRepository = { lidMapping: { getPNForLID: async (lid: string) => this.lids.get(lid) ?? null } };
}

// ---------------------------------------------------------------------------------------------------------------

interface World {
  store: Store;
  services: Services;
  instance: Instance;
  host: RecordingHost;
  connector: Connector;
  sockets: FakeSocket[];
  socket(): FakeSocket;
  setSettings(settings: Partial<Settings>): Promise<void>;
  /** Lets queued event handling finish. */
  settle(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

/**
 * How a socket that cannot reach WhatsApp Web ends, as Baileys ends it: a Boom (code 408 for network errors) carrying the
 * websocket's error as `data`.
 */
function unreachableClose(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(boom(`WebSocket Error (${message})`, 408), { data: Object.assign(new Error(message), fields) });
}

async function world(
  options: {
    settings?: Partial<Settings>;
    number?: string;
    autoOpen?: boolean;
    /** Every socket closes right away with this error (WhatsApp Web cannot be reached). */
    failWith?: Error;
    /** Every socket's pairing-code request fails with this error. */
    pairingError?: Error;
  } = {},
): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'wa-socket-'));
  const uri = `file:${join(dir, 'test.db')}`;
  const store = await openStore(uri);
  const config = loadConfig({ DATA_DIR: dir, DATABASE_CONNECTION_URI: uri, LOG_LEVEL: 'silent' });
  const services = createServices({ config, logger: silentLogger(), store, globalApiKey: 'global-test-key', secretsKey: randomBytes(32) });
  const { instance } = await services.instances.create({
    name: 'wa-fake',
    integration: 'WHATSAPP-BAILEYS',
    number: options.number,
    settings: { ...defaultSettings, ...options.settings },
    sinks: [],
  });
  const host = new RecordingHost(services.connectorHost);
  const sockets: FakeSocket[] = [];
  const autoOpen = options.autoOpen ?? true;
  const factory = createWhatsAppWebFactory({
    config: {
      qrcodeLimit: 30,
      qrcodeColor: '#198754',
      logLevel: 'silent',
      waWeb: { ...waWebDefaults, webSocketUrl: 'ws://127.0.0.1:9/unused', reconnectBaseMs: 50, reconnectMaxMs: 200 },
    },
    logger: silentLogger(),
    socketFactory: (socketConfig) => {
      const socket = new FakeSocket(socketConfig);
      sockets.push(socket);
      socket.pairingError = options.pairingError;
      const failWith = options.failWith;
      if (failWith) setImmediate(() => socket.emit('connection.update', { connection: 'close', lastDisconnect: { error: failWith, date: new Date() } }));
      else if (autoOpen) setImmediate(() => socket.open());
      return socket;
    },
    tuning: { firstQrWaitMs: 2_000, random: () => 0.5 },
  });
  const connector = factory(instance, host);
  cleanups.push(async () => {
    await connector.stop();
    await services.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const w: World = {
    store,
    services,
    instance,
    host,
    connector,
    sockets,
    socket: () => sockets[sockets.length - 1],
    async setSettings(settings) {
      const current = services.registry.byInstanceId(instance.id)!;
      await inUnit(store.db, (unit) => services.registry.updateSettings(unit, current, { ...current.settings, ...settings }));
    },
    async settle() {
      // The connector's queue runs on promises, and what it records goes through the store's own thread (SQLite): a
      // few macrotask turns, each after a store round trip (which waits for the statements sent before it), drain it.
      for (let i = 0; i < 20; i++) {
        await store.ping();
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
  return w;
}

async function connected(options: Parameters<typeof world>[0] = {}): Promise<World> {
  const w = await world(options);
  await w.connector.start();
  expect(w.connector.state()).toBe('open');
  w.host.clear();
  return w;
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);
const LID = '123456789012345@lid';
const PN = '5511988887777@s.whatsapp.net';
const GROUP = '120363012345678901@g.us';

// ---------------------------------------------------------------------------------------------------------------
// Recorded Baileys events (shapes as baileys 7.0.0-rc14 emits them; bytes as Uint8Array, 64-bit values as Long)

const recorded = {
  textFromLid: {
    key: { remoteJid: LID, remoteJidAlt: PN, fromMe: false, id: '3EB0C431C26A1916E07A', addressingMode: 'lid' },
    messageTimestamp: 1735689600,
    pushName: 'Maria',
    broadcast: false,
    message: {
      extendedTextMessage: {
        text: 'see https://example.com',
        contextInfo: { stanzaId: '3EB0AAAABBBBCCCCDDDD', participant: `${OWNER}@s.whatsapp.net`, quotedMessage: { conversation: 'hi' } },
      },
      messageContextInfo: { deviceListMetadataVersion: 2, messageSecret: bytes(32, 7) },
    },
  },
  imageInGroup: {
    key: { remoteJid: GROUP, fromMe: false, id: 'A5F1E2D3C4B5A6978812', participant: '987654321098765@lid', participantAlt: '5511977776666@s.whatsapp.net' },
    messageTimestamp: { low: 1735689700, high: 0, unsigned: true, toNumber: () => 1735689700 },
    pushName: 'João',
    message: {
      imageMessage: {
        url: 'https://mmg.whatsapp.net/v/t62.7118-24/abc.enc',
        mimetype: 'image/jpeg',
        fileSha256: bytes(32, 1),
        fileLength: 52344,
        height: 1280,
        width: 960,
        mediaKey: bytes(32, 2),
        fileEncSha256: bytes(32, 3),
        directPath: '/v/t62.7118-24/abc.enc',
        mediaKeyTimestamp: 1735689690,
        jpegThumbnail: bytes(16, 4),
        caption: 'menu',
      },
    },
  },
  revoke: {
    key: { remoteJid: PN, fromMe: false, id: '3EB0REVOKEMSG0000001' },
    messageTimestamp: 1735689800,
    message: { protocolMessage: { key: { remoteJid: PN, fromMe: false, id: '3EB0C431C26A1916E07A' }, type: 0 } },
  },
  status: {
    key: { remoteJid: 'status@broadcast', fromMe: false, id: '3A1B2C3D4E5F60718293', participant: PN },
    messageTimestamp: 1735689900,
    pushName: 'Maria',
    message: { conversation: 'my status' },
  },
  ephemeral: {
    key: { remoteJid: PN, fromMe: true, id: '3EB0EPHEMERAL0000001' },
    messageTimestamp: 1735690000,
    message: {
      ephemeralMessage: {
        message: { documentWithCaptionMessage: { message: { documentMessage: { fileName: 'a.pdf', caption: 'doc', mimetype: 'application/pdf' } } } },
      },
    },
  },
} as const;

// ---------------------------------------------------------------------------------------------------------------

describe('incoming messages (messages.upsert)', () => {
  it('reports a text from an @lid chat with the phone address, the text as conversation, bytes as base64', async () => {
    const w = await connected();
    w.socket().emit('messages.upsert', { type: 'notify', messages: [recorded.textFromLid as never] });
    await w.settle();

    expect(w.host.received()).toEqual([
      {
        keyId: '3EB0C431C26A1916E07A',
        remoteJid: PN,
        remoteJidAlt: LID,
        fromMe: false,
        participant: null,
        participantAlt: null,
        pushName: 'Maria',
        messageType: 'conversation',
        content: {
          conversation: 'see https://example.com',
          extendedTextMessage: {
            text: 'see https://example.com',
            contextInfo: { stanzaId: '3EB0AAAABBBBCCCCDDDD', participant: `${OWNER}@s.whatsapp.net`, quotedMessage: { conversation: 'hi' } },
          },
          messageContextInfo: { deviceListMetadataVersion: 2, messageSecret: b64(bytes(32, 7)) },
        },
        timestamp: 1735689600,
      },
    ]);
    // Stored by the real runtime and announced as MESSAGES_UPSERT.
    const row = await w.store.db.selectFrom('outbox').select(['event', 'body']).where('event', '=', 'MESSAGES_UPSERT').executeTakeFirst();
    // Both addresses of the chat: the phone one, and the @lid one it came from beside it.
    expect(JSON.parse(row!.body).data).toMatchObject({ key: { remoteJid: PN, remoteJidAlt: LID, id: '3EB0C431C26A1916E07A' }, messageType: 'conversation' });
  });

  it('reports group media with the sender as participant (phone address), Long numbers as strings', async () => {
    const w = await connected();
    w.socket().emit('messages.upsert', { type: 'append', messages: [recorded.imageInGroup as never] });
    await w.settle();

    const [message] = w.host.received();
    expect(message).toMatchObject({ remoteJid: GROUP, participant: '5511977776666@s.whatsapp.net', messageType: 'imageMessage', timestamp: 1735689700 });
    expect(message.content.imageMessage).toEqual({
      url: 'https://mmg.whatsapp.net/v/t62.7118-24/abc.enc',
      mimetype: 'image/jpeg',
      fileSha256: b64(bytes(32, 1)),
      fileLength: '52344',
      height: 1280,
      width: 960,
      mediaKey: b64(bytes(32, 2)),
      fileEncSha256: b64(bytes(32, 3)),
      directPath: '/v/t62.7118-24/abc.enc',
      mediaKeyTimestamp: '1735689690',
      jpegThumbnail: b64(bytes(16, 4)),
      caption: 'menu',
    });
  });

  it('opens wrappers (ephemeral, document with caption) and skips protocol messages', async () => {
    const w = await connected();
    w.socket().emit('messages.upsert', { type: 'notify', messages: [recorded.revoke as never, recorded.ephemeral as never] });
    await w.settle();

    const received = w.host.received();
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({
      keyId: '3EB0EPHEMERAL0000001',
      fromMe: true,
      messageType: 'documentMessage',
      content: { documentMessage: { fileName: 'a.pdf' } },
    });
  });

  it('readMessages marks incoming messages read (not own ones, not statuses)', async () => {
    const w = await connected({ settings: { readMessages: true } });
    w.socket().emit('messages.upsert', { type: 'notify', messages: [recorded.textFromLid as never, recorded.ephemeral as never] });
    await w.settle();
    expect(w.socket().of('readMessages')).toEqual([[[recorded.textFromLid.key]]]);

    // Turned off while connected: read live, no more receipts.
    await w.setSettings({ readMessages: false });
    w.socket().emit('messages.upsert', { type: 'notify', messages: [{ ...recorded.textFromLid, key: { ...recorded.textFromLid.key, id: 'OTHER' } } as never] });
    await w.settle();
    expect(w.socket().of('readMessages')).toHaveLength(1);
  });

  it('statuses are ignored unless readStatus, which also marks them seen', async () => {
    const w = await connected();
    expect(w.socket().config.shouldIgnoreJid?.('status@broadcast')).toBe(true);
    w.socket().emit('messages.upsert', { type: 'notify', messages: [recorded.status as never] });
    await w.settle();
    expect(w.host.received()).toEqual([]);

    await w.setSettings({ readStatus: true });
    expect(w.socket().config.shouldIgnoreJid?.('status@broadcast')).toBe(false);
    expect(w.socket().config.shouldIgnoreJid?.(PN)).toBe(false);
    w.socket().emit('messages.upsert', { type: 'notify', messages: [recorded.status as never] });
    await w.settle();
    expect(w.host.received()).toEqual([expect.objectContaining({ remoteJid: 'status@broadcast', participant: PN, content: { conversation: 'my status' } })]);
    expect(w.socket().of('readMessages')).toEqual([[[recorded.status.key]]]);
  });

  it('groupsIgnore drops group messages, read live', async () => {
    const w = await connected({ settings: { groupsIgnore: true } });
    w.socket().emit('messages.upsert', { type: 'notify', messages: [recorded.imageInGroup as never] });
    await w.settle();
    expect(w.host.received()).toEqual([]);

    await w.setSettings({ groupsIgnore: false });
    w.socket().emit('messages.upsert', { type: 'notify', messages: [recorded.imageInGroup as never] });
    await w.settle();
    expect(w.host.received()).toHaveLength(1);
  });
});

describe('history, updates, receipts, edits and deletions', () => {
  it('history sync: CHATS_SET, CONTACTS_UPSERT, then the messages (MESSAGES_SET)', async () => {
    const w = await connected();
    w.socket().emit('messaging-history.set', {
      chats: [{ id: LID, pnJid: PN, name: 'Maria', unreadCount: 2 } as never, { id: GROUP, name: 'Team' } as never],
      contacts: [{ id: LID, phoneNumber: PN, notify: 'Maria' }],
      messages: [recorded.textFromLid as never, recorded.revoke as never],
      isLatest: true,
      syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
      lidPnMappings: [{ lid: '555000111222333@lid', pn: '5511955554444@s.whatsapp.net' }],
    });
    await w.settle();

    expect(w.host.calls.map((c) => (c.method === 'eventOccurred' ? c.args[0] : c.method))).toEqual(['CHATS_SET', 'CONTACTS_UPSERT', 'messagesSynced']);
    expect(w.host.events('CHATS_SET')).toEqual([
      [
        { remoteJid: PN, remoteJidAlt: LID, instanceId: w.instance.id, name: 'Maria' },
        { remoteJid: GROUP, instanceId: w.instance.id, name: 'Team' },
      ],
    ]);
    expect(w.host.events('CONTACTS_UPSERT')).toEqual([
      [{ remoteJid: PN, remoteJidAlt: LID, pushName: 'Maria', profilePicUrl: null, instanceId: w.instance.id }],
    ]);
    const [[synced]] = w.host.of('messagesSynced') as InboundMessage[][][];
    expect(synced.map((m) => m.keyId)).toEqual(['3EB0C431C26A1916E07A']);
    const set = await w.store.db.selectFrom('outbox').select(['body']).where('event', '=', 'MESSAGES_SET').executeTakeFirst();
    expect(JSON.parse(set!.body).data).toHaveLength(1);
    // The synced message's chat and sender are kept for the find routes: old news (nothing unread), and announced by
    // CHATS_SET and CONTACTS_UPSERT above, not once more.
    const chats = await w.store.db.selectFrom('chats').select(['remote_jid', 'unread_messages']).where('instance_id', '=', w.instance.id).execute();
    expect(chats).toEqual([{ remote_jid: synced[0].remoteJid, unread_messages: 0 }]);
    const contacts = await w.store.db.selectFrom('contacts').select(['remote_jid']).where('instance_id', '=', w.instance.id).execute();
    expect(contacts).toEqual([{ remote_jid: synced[0].remoteJid }]);
    const announced = await w.store.db.selectFrom('outbox').select('event').where('event', 'in', ['CHATS_UPSERT', 'CONTACTS_UPSERT']).execute();
    expect(announced.map((row) => row.event)).toEqual(['CONTACTS_UPSERT']);

    // The mapping from the sync is used afterwards.
    w.socket().emit('presence.update', { id: '555000111222333@lid', presences: { '555000111222333@lid': { lastKnownPresence: 'composing' } } });
    await w.settle();
    expect(w.host.of('presenceReceived')).toEqual([['5511955554444@s.whatsapp.net', '5511955554444@s.whatsapp.net', 'composing']]);
  });

  it('maps Baileys status numbers 0–5 to ERROR … PLAYED, and per-user receipts to their furthest step', async () => {
    expect([0, 1, 2, 3, 4, 5, 6, undefined].map(statusFromBaileys)).toEqual([
      'ERROR',
      'PENDING',
      'SERVER_ACK',
      'DELIVERY_ACK',
      'READ',
      'PLAYED',
      undefined,
      undefined,
    ]);
    const w = await connected();
    const key = { remoteJid: PN, fromMe: true, id: '3EB0SENTBYUS00000001' };
    w.socket().emit('messages.update', [
      { key, update: { status: 2 } },
      { key, update: { status: 3 } },
      { key, update: { status: 4 } },
    ]);
    w.socket().emit('message-receipt.update', [
      { key: { remoteJid: GROUP, fromMe: true, id: '3EB0GROUPSENT0000001' }, receipt: { userJid: PN, receiptTimestamp: 1735690000 } },
      { key: { remoteJid: GROUP, fromMe: true, id: '3EB0GROUPSENT0000001' }, receipt: { userJid: PN, readTimestamp: 1735690100 } },
      { key: { remoteJid: PN, fromMe: true, id: '3EB0AUDIO00000000001' }, receipt: { userJid: PN, playedTimestamp: 1735690200 } },
    ]);
    await w.settle();
    expect(w.host.of('messageStatus')).toEqual([
      ['3EB0SENTBYUS00000001', 'SERVER_ACK'],
      ['3EB0SENTBYUS00000001', 'DELIVERY_ACK'],
      ['3EB0SENTBYUS00000001', 'READ'],
      ['3EB0GROUPSENT0000001', 'DELIVERY_ACK'],
      ['3EB0GROUPSENT0000001', 'READ'],
      ['3EB0AUDIO00000000001', 'PLAYED'],
    ]);
  });

  it('a deletion for everyone and an edit are changes of the stored message for the core (MESSAGES_DELETE, MESSAGES_EDITED)', async () => {
    const w = await connected();
    w.socket().emit('messages.update', [
      {
        key: { remoteJid: LID, remoteJidAlt: PN, fromMe: false, id: '3EB0C431C26A1916E07A' },
        update: { message: null, messageStubType: proto.WebMessageInfo.StubType.REVOKE, key: { remoteJid: LID, fromMe: false, id: '3EB0REVOKEMSG0000001' } },
      },
      {
        key: { remoteJid: GROUP, fromMe: false, id: '3EB0EDITED0000000001', participant: PN },
        update: { message: { editedMessage: { message: { conversation: 'fixed typo' } } }, messageTimestamp: 1735690300 },
      },
    ]);
    w.socket().emit('messages.delete', { keys: [{ remoteJid: PN, fromMe: true, id: '3EB0DELETEDFORME0001' }] });
    w.socket().emit('messages.delete', { jid: PN, all: true });
    await w.settle();

    expect(w.host.of('messageChanged')).toEqual([
      [{ kind: 'revoke', key: { remoteJid: PN, remoteJidAlt: LID, fromMe: false, id: '3EB0C431C26A1916E07A' } }],
      [
        {
          kind: 'edit',
          key: { remoteJid: GROUP, fromMe: false, id: '3EB0EDITED0000000001', participant: PN, participantAlt: LID },
          content: { conversation: 'fixed typo' },
          timestampMs: 1735690300000,
        },
      ],
    ]);
    // "Delete for me" synced from the phone is only announced; a deletion for everyone never as an edit too.
    // The phone address carries the @lid one once known (here from the first deletion's key).
    expect(w.host.events('MESSAGES_DELETE')).toEqual([{ remoteJid: PN, remoteJidAlt: LID, fromMe: true, id: '3EB0DELETEDFORME0001' }]);
    const outbox = await w.store.db
      .selectFrom('outbox')
      .select(['event', 'body'])
      .where('event', 'in', ['MESSAGES_DELETE', 'MESSAGES_EDITED'])
      .orderBy('seq')
      .execute();
    const data = (event: string) => outbox.filter((row) => row.event === event).map((row) => JSON.parse(row.body).data);
    expect(data('MESSAGES_DELETE')).toContainEqual({ remoteJid: PN, remoteJidAlt: LID, fromMe: false, id: '3EB0C431C26A1916E07A' });
    expect(data('MESSAGES_EDITED')).toEqual([
      {
        key: { remoteJid: GROUP, fromMe: false, id: '3EB0EDITED0000000001', participant: PN, participantAlt: LID },
        type: 'MESSAGE_EDIT',
        editedMessage: { conversation: 'fixed typo' },
        timestampMs: '1735690300000',
      },
    ]);
    expect(w.host.of('messageStatus')).toEqual([]);
  });
});

describe('contacts, chats, groups, presence, calls, labels', () => {
  it('contacts: CONTACTS_UPSERT / CONTACTS_UPDATE in Evolution shape, phone address first', async () => {
    const w = await connected();
    w.socket().emit('contacts.upsert', [
      { id: PN, lid: LID, name: 'Maria Silva', notify: 'Maria', imgUrl: 'https://pps.whatsapp.net/v/t61/x.jpg' },
      { id: '5511933332222@s.whatsapp.net', notify: 'Beto' },
    ]);
    w.socket().emit('contacts.update', [{ id: LID, imgUrl: 'changed' }]);
    await w.settle();
    expect(w.host.events('CONTACTS_UPSERT')).toEqual([
      [
        { remoteJid: PN, remoteJidAlt: LID, pushName: 'Maria Silva', profilePicUrl: 'https://pps.whatsapp.net/v/t61/x.jpg', instanceId: w.instance.id },
        { remoteJid: '5511933332222@s.whatsapp.net', pushName: 'Beto', profilePicUrl: null, instanceId: w.instance.id },
      ],
    ]);
    expect(w.host.events('CONTACTS_UPDATE')).toEqual([[{ remoteJid: PN, remoteJidAlt: LID, pushName: null, profilePicUrl: null, instanceId: w.instance.id }]]);
  });

  it('chats: CHATS_UPSERT, CHATS_UPDATE, CHATS_DELETE', async () => {
    const w = await connected();
    w.socket().lids.set(LID, PN);
    w.socket().emit('chats.upsert', [{ id: LID, name: 'Maria', unreadCount: 3 } as never]);
    w.socket().emit('chats.update', [{ id: GROUP, unreadCount: 0 }]);
    w.socket().emit('chats.delete', ['5511922221111@s.whatsapp.net']);
    await w.settle();
    expect(w.host.events('CHATS_UPSERT')).toEqual([[{ remoteJid: PN, remoteJidAlt: LID, instanceId: w.instance.id, name: 'Maria', unreadMessages: 3 }]]);
    expect(w.host.events('CHATS_UPDATE')).toEqual([[{ remoteJid: GROUP, instanceId: w.instance.id }]]);
    expect(w.host.events('CHATS_DELETE')).toEqual([['5511922221111@s.whatsapp.net']]);
  });

  it('groups: GROUPS_UPSERT, GROUP_UPDATE, GROUP_PARTICIPANTS_UPDATE with participantsData; groupsIgnore silences them', async () => {
    const w = await connected();
    const metadata = {
      id: GROUP,
      subject: 'Team',
      owner: LID,
      ownerPn: PN,
      creation: 1700000000,
      addressingMode: 'lid',
      participants: [{ id: LID, phoneNumber: PN, admin: 'superadmin' as const }],
    };
    w.socket().emit('groups.upsert', [metadata as never]);
    w.socket().emit('groups.update', [{ id: GROUP, subject: 'Team (new)', author: LID }]);
    w.socket().emit('group-participants.update', {
      id: GROUP,
      author: LID,
      authorPn: PN,
      participants: [{ id: '987654321098765@lid', phoneNumber: '5511977776666@s.whatsapp.net', admin: null }],
      action: 'add',
    });
    await w.settle();
    expect(w.host.events('GROUPS_UPSERT')).toEqual([[{ ...metadata }]]);
    expect(w.host.events('GROUP_UPDATE')).toEqual([[{ id: GROUP, subject: 'Team (new)', author: LID }]]);
    expect(w.host.events('GROUP_PARTICIPANTS_UPDATE')).toEqual([
      {
        id: GROUP,
        author: PN,
        authorAlt: LID,
        participants: ['5511977776666@s.whatsapp.net'],
        action: 'add',
        participantsData: [{ jid: '5511977776666@s.whatsapp.net', phoneNumber: '5511977776666@s.whatsapp.net', lid: '987654321098765@lid', admin: null }],
      },
    ]);

    await w.setSettings({ groupsIgnore: true });
    w.host.clear();
    w.socket().emit('groups.upsert', [metadata as never]);
    w.socket().emit('groups.update', [{ id: GROUP, subject: 'x' }]);
    w.socket().emit('group-participants.update', { id: GROUP, author: LID, participants: [{ id: PN }], action: 'remove' });
    w.socket().emit('presence.update', { id: GROUP, presences: { [PN]: { lastKnownPresence: 'composing' } } });
    await w.settle();
    expect(w.host.calls).toEqual([]);
  });

  it('presence: each participant through the host (PRESENCE_UPDATE)', async () => {
    const w = await connected();
    w.socket().emit('presence.update', { id: PN, presences: { [PN]: { lastKnownPresence: 'recording', lastSeen: 1735690000 } } });
    w.socket().emit('presence.update', {
      id: GROUP,
      presences: { [PN]: { lastKnownPresence: 'composing' }, '5511977776666@s.whatsapp.net': { lastKnownPresence: 'paused' } },
    });
    await w.settle();
    expect(w.host.of('presenceReceived')).toEqual([
      [PN, PN, 'recording'],
      [GROUP, PN, 'composing'],
      [GROUP, '5511977776666@s.whatsapp.net', 'paused'],
    ]);
    const row = await w.store.db.selectFrom('outbox').select(['body']).where('event', '=', 'PRESENCE_UPDATE').executeTakeFirst();
    expect(JSON.parse(row!.body).data).toEqual({ id: PN, presences: { [PN]: { lastKnownPresence: 'recording' } } });
  });

  it('calls: every update is a CALL event; rejectCall rejects offers and sends msgCall only then', async () => {
    const w = await connected();
    const offer = {
      chatId: LID,
      from: LID,
      callerPn: PN,
      id: 'CALL0001',
      date: new Date('2025-01-01T00:00:00Z'),
      isVideo: false,
      isGroup: false,
      status: 'offer' as const,
      offline: false,
    };
    w.socket().emit('call', [offer]);
    await w.settle();
    expect(w.host.events('CALL')).toEqual([
      {
        chatId: PN,
        from: PN,
        fromAlt: LID,
        callerPn: PN,
        id: 'CALL0001',
        date: '2025-01-01T00:00:00.000Z',
        isVideo: false,
        isGroup: false,
        status: 'offer',
        offline: false,
      },
    ]);
    expect(w.socket().of('rejectCall')).toEqual([]);
    expect(w.socket().relayed).toEqual([]);

    await w.setSettings({ rejectCall: true, msgCall: 'I cannot take calls; please write.' });
    w.socket().emit('call', [
      { ...offer, id: 'CALL0002' },
      { ...offer, id: 'CALL0002', status: 'terminate' },
    ]);
    await w.settle();
    expect(w.socket().of('rejectCall')).toEqual([['CALL0002', LID]]);
    expect(w.socket().relayed).toEqual([
      { jid: PN, message: { conversation: 'I cannot take calls; please write.' }, options: { messageId: expect.stringMatching(/^3EB0/) } },
    ]);
    expect(w.host.received()).toEqual([
      expect.objectContaining({ remoteJid: PN, fromMe: true, content: { conversation: 'I cannot take calls; please write.' } }),
    ]);
    expect(w.host.events('CALL').map((c) => (c as { status: string }).status)).toEqual(['offer', 'offer', 'terminate']);

    // rejectCall off: msgCall alone sends nothing.
    await w.setSettings({ rejectCall: false });
    w.socket().emit('call', [{ ...offer, id: 'CALL0003' }]);
    await w.settle();
    expect(w.socket().relayed).toHaveLength(1);
  });

  it('labels: labels.edit stores the label and announces it once; labels.association stores the chat label', async () => {
    const w = await connected();
    const outbox = async (event: string) =>
      (await w.store.db.selectFrom('outbox').select('body').where('event', '=', event).orderBy('seq').execute()).map((row) => JSON.parse(row.body).data);
    const paid = { id: '5', name: 'Paid', color: 3, deleted: false, predefinedId: '2' };
    w.socket().emit('labels.edit', paid);
    // The initial app-state sync reports it again: nothing changed, nothing announced.
    w.socket().emit('labels.edit', paid);
    w.socket().emit('labels.edit', { id: '6', name: 'VIP', color: 7, deleted: false });
    w.socket().emit('labels.association', { type: 'add', association: { type: 'label_jid' as never, chatId: PN, labelId: '5' } });
    w.socket().emit('labels.association', { type: 'add', association: { type: 'label_jid' as never, chatId: PN, labelId: '5' } });
    w.socket().emit('labels.association', { type: 'add', association: { type: 'label_message' as never, chatId: PN, messageId: '3EB0MSG', labelId: '6' } });
    await w.settle();
    expect(await w.services.labels.find(w.instance)).toEqual([
      { color: '3', name: 'Paid', id: '5', predefinedId: '2' },
      { color: '7', name: 'VIP', id: '6', predefinedId: null },
    ]);
    expect(await outbox('LABELS_EDIT')).toEqual([
      { id: '5', name: 'Paid', color: 3, deleted: false, predefinedId: '2', instance: 'wa-fake' },
      { id: '6', name: 'VIP', color: 7, deleted: false, instance: 'wa-fake' },
    ]);
    // A chat label is kept on the chat and announced once; a message's label is announced with its message id only.
    expect(await outbox('LABELS_ASSOCIATION')).toEqual([
      { instance: 'wa-fake', type: 'add', chatId: PN, labelId: '5' },
      { instance: 'wa-fake', type: 'add', chatId: PN, labelId: '6', messageId: '3EB0MSG' },
    ]);
    const chat = await w.store.db.selectFrom('chats').select('labels').where('remote_jid', '=', PN).executeTakeFirstOrThrow();
    expect(JSON.parse(chat.labels)).toEqual(['5']);

    // Deleting a label forgets it and takes it off its chats.
    w.socket().emit('labels.edit', { ...paid, deleted: true });
    await w.settle();
    expect((await w.services.labels.find(w.instance)).map((label) => label.id)).toEqual(['6']);
    expect((await outbox('LABELS_EDIT')).at(-1)).toEqual({ ...paid, deleted: true, instance: 'wa-fake' });
    const after = await w.store.db.selectFrom('chats').select('labels').where('remote_jid', '=', PN).executeTakeFirstOrThrow();
    expect(JSON.parse(after.labels)).toEqual([]);
  });

  it('labels: adding and removing a chat label are addChatLabel / removeChatLabel on the socket', async () => {
    const w = await connected();
    await w.connector.labels!.addChatLabel(PN, '5');
    await w.connector.labels!.removeChatLabel(GROUP, '6');
    expect(w.socket().of('addChatLabel')).toEqual([[PN, '5']]);
    expect(w.socket().of('removeChatLabel')).toEqual([[GROUP, '6']]);
    // WhatsApp's refusal (here a closed connection) is a 400 with its words, never a 500.
    w.socket().labelError = boom('Connection Closed', 428);
    const refused = await w.connector.labels!.addChatLabel(PN, '5').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ProviderError);
    expect((refused as ProviderError).messages).toEqual(['Unable to add label to chat', 'Connection Closed']);
    expect(statusOf(refused as ProviderError)).toBe(400);
  });
});

// ---------------------------------------------------------------------------------------------------------------

function outbound(
  keyId: string,
  remoteJid: string,
  built: { messageType: string; content: Record<string, unknown> },
  extra: Partial<OutboundMessage> = {},
): OutboundMessage {
  return { keyId, remoteJid, messageType: built.messageType, content: built.content, ...extra };
}

describe('sending (at the Baileys socket boundary)', () => {
  it('relays with our key id as the WhatsApp message id; a retry relays the same id', async () => {
    const w = await connected();
    const message = outbound('3EB0OURKEY0000000001', PN, textContent('hello', undefined));
    await w.connector.messaging.send(message);
    await w.connector.messaging.send(message);
    expect(w.socket().relayed).toEqual([
      { jid: PN, message: proto.Message.fromObject({ conversation: 'hello' }), options: { messageId: '3EB0OURKEY0000000001' } },
      { jid: PN, message: proto.Message.fromObject({ conversation: 'hello' }), options: { messageId: '3EB0OURKEY0000000001' } },
    ]);
  });

  it('turns JSON content back into protobuf: base64 → bytes, numeric strings → 64-bit, poll secrets kept', async () => {
    const w = await connected();
    const poll = pollContent('Lunch?', ['Pizza', 'Sushi'], 1);
    await w.connector.messaging.send(outbound('3EB0POLL000000000001', PN, poll));
    const [relayed] = w.socket().relayed;
    const secret = relayed.message.messageContextInfo?.messageSecret;
    expect(Buffer.from(secret!).toString('base64')).toBe((poll.content.messageContextInfo as { messageSecret: string }).messageSecret);
    expect(relayed.message.pollCreationMessage).toMatchObject({
      name: 'Lunch?',
      selectableOptionsCount: 1,
      options: [{ optionName: 'Pizza' }, { optionName: 'Sushi' }],
    });
  });

  it('uploads media accepted before it could be uploaded: kept plaintext encrypted with the content’s mediaKey', async () => {
    const w = await connected();
    const plain = Buffer.from('%PDF-1.4 a small document for the test\n');
    const prepared = await prepareMedia(plain, 'document', { fileName: 'menu.pdf', declaredMimetype: 'application/pdf' });
    const built = mediaContent(prepared, { url: '', directPath: '' }, { caption: 'menu' });
    await w.store.db.insertInto('media_blobs').values({ id: 'blob-1', instance_id: w.instance.id, data: plain, created_at: Date.now() }).execute();

    await w.connector.messaging.send(outbound('3EB0MEDIA00000000001', PN, built, { mediaBlobId: 'blob-1' }));

    const [upload] = w.socket().uploads;
    expect(upload.mediaType).toBe('document');
    // What went up is exactly the encryption the content describes (same key → same ciphertext, same hash).
    expect(createHash('sha256').update(upload.bytes).digest('base64')).toBe(prepared.fileEncSha256);
    expect(upload.bytes.equals(prepared.encrypted)).toBe(true);
    const document = w.socket().relayed[0].message.documentMessage!;
    expect(document.url).toBe('https://mmg.whatsapp.net/v/t62.7119-24/uploaded.enc');
    expect(document.directPath).toBe('/v/t62.7119-24/uploaded.enc');
    expect(Buffer.from(document.mediaKey!).toString('base64')).toBe(prepared.mediaKey);
    expect(String(document.fileLength)).toBe(String(plain.length));
    expect(document.fileName).toBe('menu.pdf');
  });

  it('kept encrypted bytes are uploaded as they are; media already uploaded is not uploaded again', async () => {
    const w = await connected();
    const plain = Buffer.from('%PDF-1.4 another document\n');
    const prepared = await prepareMedia(plain, 'document', { fileName: 'b.pdf' });
    await w.store.db
      .insertInto('media_blobs')
      .values({ id: 'blob-enc', instance_id: w.instance.id, data: prepared.encrypted, created_at: Date.now() })
      .execute();
    await w.connector.messaging.send(
      outbound('3EB0MEDIA00000000002', PN, mediaContent(prepared, { url: '', directPath: '' }, {}), { mediaBlobId: 'blob-enc' }),
    );
    expect(w.socket().uploads[0].bytes.equals(prepared.encrypted)).toBe(true);

    await w.connector.messaging.send(
      outbound('3EB0MEDIA00000000003', PN, mediaContent(prepared, { url: 'https://mmg.whatsapp.net/x.enc', directPath: '/x.enc' }, {})),
    );
    expect(w.socket().uploads).toHaveLength(1);
  });

  it('encryptWithKey reproduces the core’s encryption for the same key', async () => {
    const plain = randomBytes(1000);
    const core = await encryptMedia(plain, 'video');
    const again = await encryptWithKey(plain, core.mediaKey, 'video');
    expect(again.encrypted.equals(core.encrypted)).toBe(true);
    expect(again.fileEncSha256.equals(core.fileEncSha256)).toBe(true);
    expect(again.fileSha256.equals(core.fileSha256)).toBe(true);
  });

  it('media whose bytes are gone or do not match fails for good (not retried)', async () => {
    const w = await connected();
    const prepared = await prepareMedia(Buffer.from('%PDF-1.4 x\n'), 'document', { fileName: 'c.pdf' });
    const built = mediaContent(prepared, { url: '', directPath: '' }, {});
    await w.store.db
      .insertInto('media_blobs')
      .values({ id: 'blob-wrong', instance_id: w.instance.id, data: Buffer.from('other bytes'), created_at: Date.now() })
      .execute();
    const missing = await w.connector.messaging.send(outbound('K1', PN, built, { mediaBlobId: 'nope' })).catch((e: unknown) => e);
    const wrong = await w.connector.messaging.send(outbound('K2', PN, built, { mediaBlobId: 'blob-wrong' })).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Error);
    expect(missing).not.toBeInstanceOf(TransientConnectorError);
    expect(String(missing)).toMatch(/kept copy is gone/);
    expect(wrong).not.toBeInstanceOf(TransientConnectorError);
    expect(String(wrong)).toMatch(/do not match/);
    expect(w.socket().relayed).toEqual([]);
  });

  it('statuses go to status@broadcast with statusJidList; the font name becomes its wire number', async () => {
    const w = await connected();
    const built = statusTextContent('Open today', '#008000', 2);
    await w.connector.messaging.send(outbound('3EB0STATUS0000000001', 'status@broadcast', built, { statusJidList: [PN, '5511977776666@s.whatsapp.net'] }));
    const [relayed] = w.socket().relayed;
    expect(relayed.jid).toBe('status@broadcast');
    expect(relayed.options).toEqual({ messageId: '3EB0STATUS0000000001', statusJidList: [PN, '5511977776666@s.whatsapp.net'] });
    expect(relayed.message.extendedTextMessage).toMatchObject({ text: 'Open today', font: 2, backgroundArgb: 0xff008000 });
  });

  it('mentionsEveryOne mentions every current participant of a group (a plain text becomes an extended one)', async () => {
    const w = await connected();
    await w.connector.messaging.send(outbound('3EB0MENTION000000001', GROUP, textContent('meeting now', undefined), { mentionsEveryOne: true }));
    await w.connector.messaging.send(outbound('3EB0MENTION000000002', PN, textContent('only a chat', undefined), { mentionsEveryOne: true }));
    const [group, chat] = w.socket().relayed;
    expect(group.message.conversation).toBeFalsy();
    expect(group.message.extendedTextMessage).toMatchObject({
      text: 'meeting now',
      contextInfo: { mentionedJid: ['5511911110001@s.whatsapp.net', '5511911110002@s.whatsapp.net'] },
    });
    expect(chat.message.conversation).toBe('only a chat');
  });

  it('buttons: the view-once interactive message is relayed as is; a pending header image is uploaded; everyone mentioned in it', async () => {
    const w = await connected();
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#aa3300' } })
      .png()
      .toBuffer();
    const prepared = await prepareMedia(png, 'image', {});
    const header = imageHeader(mediaContent(prepared, { url: '', directPath: '' }, {}).content.imageMessage as Record<string, unknown>);
    await w.store.db.insertInto('media_blobs').values({ id: 'blob-head', instance_id: w.instance.id, data: png, created_at: Date.now() }).execute();
    const built = buttonsContent({ title: 'Menu', footer: 'Shop', buttons: [{ type: 'reply', displayText: 'Yes', id: 'y' }] }, { header });
    await w.connector.messaging.send(outbound('3EB0BUTTONS000000001', GROUP, built, { mediaBlobId: 'blob-head', mentionsEveryOne: true }));
    const [relayed] = w.socket().relayed;
    expect(relayed.options).toEqual({ messageId: '3EB0BUTTONS000000001' });
    const interactive = relayed.message.viewOnceMessage!.message!.interactiveMessage!;
    expect(interactive.body?.text).toBe('*Menu*');
    expect(interactive.footer?.text).toBe('Shop');
    expect(interactive.nativeFlowMessage?.buttons).toEqual([
      expect.objectContaining({ name: 'quick_reply', buttonParamsJson: JSON.stringify({ display_text: 'Yes', id: 'y' }) }),
    ]);
    expect(w.socket().uploads).toHaveLength(1);
    expect(w.socket().uploads[0].mediaType).toBe('image');
    expect(interactive.header?.imageMessage?.url).toBe('https://mmg.whatsapp.net/v/t62.7119-24/uploaded.enc');
    expect(interactive.header?.hasMediaAttachment).toBe(true);
    expect(interactive.contextInfo?.mentionedJid).toEqual(['5511911110001@s.whatsapp.net', '5511911110002@s.whatsapp.net']);
  });

  it('a closed socket or a connection failure is a TransientConnectorError; a refusal is not', async () => {
    const w = await connected();
    w.socket().relayError = boom('Connection Closed', 428);
    const transient = await w.connector.messaging.send(outbound('K3', PN, textContent('x', undefined))).catch((e: unknown) => e);
    expect(transient).toBeInstanceOf(TransientConnectorError);
    w.socket().relayError = boom('not-acceptable', 406);
    const refused = await w.connector.messaging.send(outbound('K4', PN, textContent('x', undefined))).catch((e: unknown) => e);
    expect(refused).not.toBeInstanceOf(TransientConnectorError);
    expect(String(refused)).toMatch(/refused the send/);

    await w.connector.stop();
    for (const attempt of [
      w.connector.messaging.send(outbound('K5', PN, textContent('x', undefined))),
      w.connector.presence!.sendPresence(PN, 'composing'),
      w.connector.messaging.markRead([{ remoteJid: PN, keyId: 'K' }]),
    ]) {
      await expect(attempt).rejects.toBeInstanceOf(TransientConnectorError);
    }
  });

  it("setOwnPresence is Baileys' presence without a chat; onWhatsApp matches answers back to the numbers asked", async () => {
    const w = await connected();
    await w.connector.presence!.setOwnPresence('unavailable');
    expect(w.socket().of('sendPresenceUpdate')).toEqual([['unavailable', undefined]]);

    w.socket().lids.set('555000111222333@lid', '5511922221111@s.whatsapp.net');
    const answers = await w.connector.contacts!.onWhatsApp([
      { number: '5511988887777', jid: '5511988887777@s.whatsapp.net' },
      { number: '+55 11 97777-0000', jid: '5511977770000@s.whatsapp.net' },
      { number: '555000111222333@lid', jid: '555000111222333@lid' },
    ]);
    expect(w.socket().of('onWhatsApp')).toEqual([['5511988887777@s.whatsapp.net', '5511977770000@s.whatsapp.net']]);
    expect(answers).toEqual([
      { exists: true, jid: '551188887777@s.whatsapp.net', number: '5511988887777' },
      { exists: false, jid: '5511977770000@s.whatsapp.net', number: '+55 11 97777-0000' },
      { exists: true, jid: '5511922221111@s.whatsapp.net', number: '555000111222333@lid', lid: '555000111222333@lid' },
    ]);
    // An @lid address the connector learnt is the other address of its phone one, and the reverse (no round trip).
    expect(w.connector.contacts!.alternateAddress!('555000111222333@lid')).toBe('5511922221111@s.whatsapp.net');
    expect(w.connector.contacts!.alternateAddress!('5511922221111@s.whatsapp.net')).toBe('555000111222333@lid');
    expect(w.connector.contacts!.alternateAddress!('5511900000000@s.whatsapp.net')).toBeNull();
    // Baileys 7 answers an account's @lid address beside its phone one: the answer carries both.
    w.socket().accountLids.set('551188887777@s.whatsapp.net', '777000111222333@lid');
    const withLid = await w.connector.contacts!.onWhatsApp([{ number: '5511988887777', jid: '5511988887777@s.whatsapp.net' }]);
    expect(withLid).toEqual([{ exists: true, jid: '551188887777@s.whatsapp.net', number: '5511988887777', lid: '777000111222333@lid' }]);
    expect(w.connector.contacts!.alternateAddress!('777000111222333@lid')).toBe('551188887777@s.whatsapp.net');
  });

  it('profiles: pictures (null when refused), a profile as others see it, the own name and about', async () => {
    const w = await connected();
    const profile = w.connector.profile!;
    expect(await profile.pictureUrl('5511911110001@s.whatsapp.net')).toBe('https://pps.whatsapp.net/v/5511911110001.jpg');
    expect(await profile.pictureUrl('5511911110009@s.whatsapp.net')).toBeNull();
    expect(await profile.fetch('5511911110002@s.whatsapp.net')).toEqual({
      name: null,
      picture: 'https://pps.whatsapp.net/v/5511911110002.jpg',
      status: { status: 'Busy', setAt: new Date(1_700_000_000_000).toISOString() },
      isBusiness: true,
    });
    expect(await profile.fetch('5511911110009@s.whatsapp.net')).toBeNull();
    expect((await profile.fetch(`${OWNER}@s.whatsapp.net`))?.name).toBe('Front desk');
    await profile.setName('Reception');
    await profile.setStatus('Open 9-5');
    expect(w.socket().of('updateProfileName')).toEqual([['Reception']]);
    expect(w.socket().of('updateProfileStatus')).toEqual([['Open 9-5']]);
  });

  it('archive and mark unread are chatModify patches with the chat and its last message', async () => {
    const w = await connected();
    const last = { key: { id: '3EB0LAST', remoteJid: PN, fromMe: false }, messageTimestamp: 1_735_690_000 };
    await w.connector.chats!.archive(PN, true, last);
    await w.connector.chats!.archive(PN, false, null);
    await w.connector.chats!.markUnread(PN, last);
    expect(w.socket().of('chatModify')).toEqual([
      [{ archive: true, lastMessages: [last] }, PN],
      [{ archive: false, lastMessages: [] }, PN],
      [{ markRead: false, lastMessages: [last] }, PN],
    ]);
  });
  it('profile pictures and business profiles: updateProfilePicture / removeProfilePicture on the own address, getBusinessProfile', async () => {
    const w = await connected();
    const profile = w.connector.profile!;
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
    await profile.setPicture(jpeg);
    await profile.removePicture();
    expect(w.socket().of('updateProfilePicture')).toEqual([[`${OWNER}@s.whatsapp.net`, jpeg]]);
    expect(w.socket().of('removeProfilePicture')).toEqual([[`${OWNER}@s.whatsapp.net`]]);
    expect(await profile.businessProfile('5511911110002@s.whatsapp.net')).toEqual({
      wid: '5511911110002@s.whatsapp.net',
      description: 'Shop',
      website: ['https://shop.example'],
      email: 'shop@example.com',
      category: 'Retail',
      business_hours: { timezone: 'America/Sao_Paulo', business_config: [{ day_of_week: 'mon', mode: 'open_24h' }] },
    });
    expect(await profile.businessProfile('5511911110001@s.whatsapp.net')).toBeNull();
  });

  it('presence, privacy and read receipts go through the matching Baileys calls', async () => {
    const w = await connected();
    await w.connector.presence!.sendPresence(PN, 'composing');
    await w.connector.presence!.sendPresence('', 'available');
    expect(w.socket().of('sendPresenceUpdate')).toEqual([
      ['composing', PN],
      ['available', undefined],
    ]);

    const privacy: PrivacySettings = {
      readreceipts: 'none',
      profile: 'contacts',
      status: 'contact_blacklist',
      online: 'match_last_seen',
      last: 'none',
      groupadd: 'contacts',
    };
    await w.connector.privacy!.updatePrivacy(privacy);
    expect(
      w
        .socket()
        .calls.filter((c) => c.method.startsWith('update'))
        .map((c) => [c.method, c.args[0]]),
    ).toEqual([
      ['updateReadReceiptsPrivacy', 'none'],
      ['updateProfilePicturePrivacy', 'contacts'],
      ['updateStatusPrivacy', 'contact_blacklist'],
      ['updateOnlinePrivacy', 'match_last_seen'],
      ['updateLastSeenPrivacy', 'none'],
      ['updateGroupsAddPrivacy', 'contacts'],
    ]);
    await expect(w.connector.privacy!.updatePrivacy({ ...privacy, online: 'contacts' })).rejects.toThrow(/online must be one of/);

    // Privacy as WhatsApp has it: the six settings of Baileys' answer.
    expect(await w.connector.privacy!.fetchPrivacy!()).toEqual({
      readreceipts: 'all',
      profile: 'contacts',
      status: 'contacts',
      online: 'all',
      last: 'none',
      groupadd: 'all',
    });

    // A group message's sender is remembered so its read receipt can be addressed.
    w.socket().emit('messages.upsert', { type: 'notify', messages: [recorded.imageInGroup as never] });
    await w.settle();
    await w.connector.messaging.markRead([
      { remoteJid: GROUP, keyId: 'A5F1E2D3C4B5A6978812' },
      { remoteJid: PN, keyId: '3EB0C431C26A1916E07A' },
    ]);
    expect(w.socket().of('readMessages')).toEqual([
      [
        [
          { remoteJid: GROUP, id: 'A5F1E2D3C4B5A6978812', fromMe: false, participant: '987654321098765@lid' },
          { remoteJid: PN, id: '3EB0C431C26A1916E07A', fromMe: false },
        ],
      ],
    ]);
  });

  it('a voice note goes out as Baileys audio (ptt, seconds, 64-bar waveform), after "recording"; a round video as ptvMessage', async () => {
    const w = await connected();
    const ffmpeg = new Ffmpeg({ concurrency: 1, timeoutMs: 60_000 });
    const voice = await prepareVoiceNote(ffmpeg, await sine('mp3'), { field: 'audio', convert: true, maxBytes: 16 * 1024 * 1024 });
    const audio = await prepareMedia(voice.bytes, 'audio', { field: 'audio' });
    const note = voiceNoteContent(audio, { url: '', directPath: '' }, voice, undefined);
    await w.store.db.insertInto('media_blobs').values({ id: 'blob-voice', instance_id: w.instance.id, data: voice.bytes, created_at: Date.now() }).execute();

    await sendAfterTyping(w.connector, PN, outbound('3EB0VOICE00000000001', PN, note, { mediaBlobId: 'blob-voice' }), 20, undefined);

    expect(w.socket().of('sendPresenceUpdate')).toEqual([
      ['recording', PN],
      ['paused', PN],
    ]);
    expect(w.socket().uploads[0].mediaType).toBe('audio');
    expect(w.socket().uploads[0].bytes.equals(audio.encrypted)).toBe(true);
    const sent = w.socket().relayed[0].message.audioMessage!;
    expect(sent).toMatchObject({ ptt: true, seconds: 2, mimetype: 'audio/ogg; codecs=opus', url: 'https://mmg.whatsapp.net/v/t62.7119-24/uploaded.enc' });
    expect(Buffer.from(sent.waveform!)).toEqual(voice.waveform);
    expect(sent.waveform).toHaveLength(64);

    const video = await prepareRoundVideo(ffmpeg, await testVideo('mp4'), { field: 'video', maxBytes: 16 * 1024 * 1024 });
    const prepared = await prepareMedia(video.bytes, 'video', { field: 'video' });
    const round = ptvContent(prepared, { url: '', directPath: '' }, video.seconds, undefined);
    await w.store.db.insertInto('media_blobs').values({ id: 'blob-ptv', instance_id: w.instance.id, data: video.bytes, created_at: Date.now() }).execute();
    await w.connector.messaging.send(outbound('3EB0PTV0000000000001', PN, round, { mediaBlobId: 'blob-ptv' }));
    expect(w.socket().uploads[1].mediaType).toBe('video');
    const relayed = w.socket().relayed[1].message;
    expect(relayed.videoMessage).toBeFalsy();
    expect(relayed.ptvMessage).toMatchObject({ seconds: 2, mimetype: 'video/mp4', url: 'https://mmg.whatsapp.net/v/t62.7119-24/uploaded.enc' });
    expect(Buffer.from(relayed.ptvMessage!.mediaKey!).toString('base64')).toBe(prepared.mediaKey);
  });

  it('uploads media when the send is accepted if connected, else leaves it for send time', async () => {
    const w = await connected();
    const encrypted = randomBytes(64);
    expect(await w.connector.messaging.uploadMedia!(encrypted, 'image')).toEqual({
      url: 'https://mmg.whatsapp.net/v/t62.7119-24/uploaded.enc',
      directPath: '/v/t62.7119-24/uploaded.enc',
    });
    expect(w.socket().uploads[0]).toMatchObject({ mediaType: 'image', fileEncSha256B64: createHash('sha256').update(encrypted).digest('base64') });
    await w.connector.stop();
    expect(await w.connector.messaging.uploadMedia!(encrypted, 'image')).toEqual({ url: '', directPath: '' });
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('lifecycle at the socket boundary', () => {
  it('socket options follow the settings when it is created (alwaysOnline, syncFullHistory, browser)', async () => {
    const w = await connected({ settings: { alwaysOnline: true, syncFullHistory: true } });
    const config = w.socket().config;
    expect(config.markOnlineOnConnect).toBe(true);
    expect(config.syncFullHistory).toBe(true);
    expect(config.shouldSyncHistoryMessage?.({ syncType: proto.HistorySync.HistorySyncType.FULL } as never)).toBe(true);
    expect(config.emitOwnEvents).toBe(false);
    expect(config.browser?.slice(0, 2)).toEqual(['Switchboard', 'Chrome']);
    expect(config.waWebSocketUrl).toBe('ws://127.0.0.1:9/unused');
    expect(w.host.calls).toEqual([]);
  });

  it('reports open with the normalised owner address and profile name', async () => {
    const w = await world();
    await w.connector.start();
    expect(w.host.of('connectionChanged')).toEqual([
      [{ state: 'connecting' }],
      [{ state: 'open', ownerJid: `${OWNER}@s.whatsapp.net`, profileName: 'Front desk', statusReason: 200 }],
    ]);
    expect(w.services.registry.byInstanceId(w.instance.id)).toMatchObject({ status: 'open', ownerJid: `${OWNER}@s.whatsapp.net`, profileName: 'Front desk' });
  });

  it('never two live sockets: a restart ends the old socket before creating the new one, and its late events are dropped', async () => {
    const w = await connected();
    const old = w.socket();
    await w.connector.stop();
    expect(old.ended).toBe(true);
    await w.connector.start();
    expect(w.sockets).toHaveLength(2);
    expect(w.connector.state()).toBe('open');

    w.host.clear();
    old.emit('messages.upsert', { type: 'notify', messages: [recorded.textFromLid as never] });
    old.close(428);
    await w.settle();
    expect(w.host.calls).toEqual([]);
    expect(w.connector.state()).toBe('open');
  });

  it('after a logout and a new link, incoming messages are still processed (Evolution B3)', async () => {
    const w = await connected();
    await w.connector.logout();
    expect(w.socket().of('logout')).toHaveLength(1);
    expect(w.host.of('loggedOut')).toHaveLength(1);
    expect(w.connector.state()).toBe('close');

    await w.connector.start();
    expect(w.connector.state()).toBe('open');
    w.socket().emit('messages.upsert', { type: 'notify', messages: [recorded.textFromLid as never] });
    await w.settle();
    expect(w.host.received()).toHaveLength(1);
  });

  it('403 is permanent: closes with the reason and STATUS_INSTANCE, keeps the session, no reconnect', async () => {
    const w = await connected();
    w.socket().close(403, 'Connection Failure');
    await w.settle();
    expect(w.connector.state()).toBe('close');
    expect(w.host.events('STATUS_INSTANCE')).toEqual([expect.objectContaining({ status: 'closed', disconnectionReasonCode: 403 })]);
    expect(w.host.of('connectionChanged').at(-1)).toEqual([{ state: 'close', reason: 'WhatsApp refused this account (403 forbidden)', statusReason: 403 }]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(w.sockets).toHaveLength(1);
  });

  it('start() of an unlinked instance returns with the first QR, carrying the pairing code when the instance has a number', async () => {
    const w = await world({ number: '5511966665555', autoOpen: false });
    const starting = w.connector.start();
    // The socket is made once the stored session has been read (through the store's thread on SQLite).
    await vi.waitFor(() => expect(w.sockets).toHaveLength(1), { timeout: 5_000 });
    w.socket().emit('connection.update', { qr: '2@AbCdEf,noise,identity,adv,1' });
    await starting;
    expect(w.socket().of('requestPairingCode')).toEqual([['5511966665555']]);
    expect(w.connector.qr()).toMatchObject({ code: '2@AbCdEf,noise,identity,adv,1', count: 1, pairingCode: 'WXYZ2345' });
    // Pairing mode keeps Baileys' default browser (a platform WhatsApp accepts for codes).
    expect(w.socket().config.browser).toBeUndefined();
  });
});

describe('when WhatsApp Web cannot be reached (at the socket boundary)', () => {
  it('start() returns at once; the state says connecting with the reason and code, reported on every attempt', async () => {
    const w = await world({
      failWith: unreachableClose('getaddrinfo ENOTFOUND web.whatsapp.com', { code: 'ENOTFOUND', hostname: 'web.whatsapp.com', syscall: 'getaddrinfo' }),
    });
    const startedAt = Date.now();
    await w.connector.start();
    // Not the first-QR wait (2 s here): the failed attempt settles it.
    expect(Date.now() - startedAt).toBeLessThan(1_500);
    expect(w.connector.state()).toBe('connecting');
    expect(w.connector.qr()).toBeNull();
    const reason = "cannot reach WhatsApp Web: the name web.whatsapp.com does not resolve (DNS lookup failed: ENOTFOUND); check this machine's DNS and network";
    expect(w.connector.problem?.()).toMatchObject({ reason, statusCode: 408, retryAt: expect.any(Number) });

    // Retries (50–200 ms waits here), each failure told to the core with the reason and code.
    await vi.waitFor(() => expect(w.sockets.length).toBeGreaterThanOrEqual(3), { timeout: 5_000 });
    await vi.waitFor(() => expect(w.host.named('connection').length).toBeGreaterThanOrEqual(3), { timeout: 5_000 });
    const [first, ...failures] = w.host.named('connection');
    expect(first).toMatchObject({ state: 'connecting' });
    for (const failure of failures) expect(failure).toEqual({ kind: 'connection', id: w.instance.id, state: 'connecting', reason, statusReason: 408 });
    await w.connector.stop();
    expect(w.connector.state()).toBe('close');
  });

  it('names a refused address and an attempt that timed out', () => {
    const context = { address: new URL('ws://127.0.0.1:9/ws/chat'), timeoutMs: 1_500 };
    const refused = classifyClose(unreachableClose('connect ECONNREFUSED 127.0.0.1:9', { code: 'ECONNREFUSED', address: '127.0.0.1', port: 9 }), context);
    expect(refused).toEqual({
      kind: 'unreachable',
      statusCode: 408,
      reason: 'cannot reach WhatsApp Web at 127.0.0.1:9: connection refused (ECONNREFUSED); a firewall or proxy in the way?',
    });
    const hung = classifyClose(unreachableClose('Opening handshake has timed out', {}), context);
    expect(hung).toMatchObject({
      kind: 'unreachable',
      statusCode: 408,
      reason: 'no answer from WhatsApp Web at 127.0.0.1:9 within 1.5 s (Opening handshake has timed out)',
    });
    // A proxy answering the websocket upgrade with 403 says nothing about the account: retried, not a permanent stop.
    const proxied = classifyClose(
      Object.assign(boom('WebSocket Error (Unexpected server response: 403)', 403), { data: new Error('Unexpected server response: 403') }),
      context,
    );
    expect(proxied).toMatchObject({
      kind: 'unreachable',
      statusCode: 403,
      reason: expect.stringMatching(/answered HTTP 403 instead of opening the WhatsApp Web websocket/),
    });
    // WhatsApp itself refusing the account still stops.
    expect(classifyClose(boom('Connection Failure', 403), context).kind).toBe('permanent');
  });

  it('a pairing code WhatsApp refuses is carried with the QR code, which still works', async () => {
    const w = await world({ number: '5511966665555', autoOpen: false, pairingError: boom('bad-request', 400) });
    const starting = w.connector.start();
    await vi.waitFor(() => expect(w.sockets).toHaveLength(1), { timeout: 5_000 });
    w.socket().emit('connection.update', { qr: '2@AbCdEf,noise,identity,adv,1' });
    await starting;
    expect(w.connector.qr()).toMatchObject({
      count: 1,
      pairingCode: null,
      pairingProblem: 'WhatsApp gave no pairing code for 5511966665555: bad-request; the QR code still works',
    });
    expect(w.connector.problem?.()).toBeNull();
  });
});

describe('small rules', () => {
  it('backoff: base·2^(n−1) capped, jittered into its upper half, never zero', () => {
    const at = (attempt: number, r: number) => delayFor({ initialMs: 1000, maxMs: 8000, factor: 2, jitter: 'upper-half' }, attempt, () => r);
    expect([1, 2, 3, 4, 5, 10].map((n) => at(n, 0))).toEqual([500, 1000, 2000, 4000, 4000, 4000]);
    expect([1, 2, 3, 4, 5].map((n) => at(n, 0.999))).toEqual([1000, 1999, 3998, 7996, 7996]);
    expect(delayFor({ initialMs: 1, maxMs: 1, factor: 2, jitter: 'upper-half' }, 1, () => 0)).toBe(1);
  });

  it('close codes: 401 forgets, 403/402/406 stop, 440 stops (replaced), 515 restarts, others retry', () => {
    const kind = (code?: number) => classifyClose(code === undefined ? undefined : boom('x', code)).kind;
    expect([401, 403, 402, 406, 440, 515, 428, 408, 500, 503, undefined].map(kind)).toEqual([
      'logged-out',
      'permanent',
      'permanent',
      'permanent',
      'replaced',
      'restart',
      'transient',
      'transient',
      'transient',
      'transient',
      'transient',
    ]);
  });
});

describe('changing sent messages, blocking, media downloads (at the Baileys socket boundary)', () => {
  it('a received edit then a deletion change the stored message: text replaced and EDITED, then DELETED with the record announced', async () => {
    const w = await connected();
    const key = { remoteJid: PN, fromMe: false, id: '3EB0STORED0000000001' };
    w.socket().emit('messages.upsert', {
      type: 'notify',
      messages: [{ key, messageTimestamp: 1735690000, pushName: 'Maria', message: { conversation: 'helo' } } as never],
    });
    await w.settle();
    w.socket().emit('messages.update', [{ key, update: { message: { editedMessage: { message: { conversation: 'hello' } } }, messageTimestamp: 1735690100 } }]);
    await w.settle();
    const row = () => w.store.db.selectFrom('messages').selectAll().where('key_id', '=', key.id).executeTakeFirstOrThrow();
    expect((await row()).status).toBe('EDITED');
    expect(JSON.parse((await row()).content)).toEqual({ conversation: 'hello' });
    w.socket().emit('messages.update', [{ key, update: { message: null, messageStubType: proto.WebMessageInfo.StubType.REVOKE } }]);
    // Baileys reports a revoke once per device: the second report changes and announces nothing.
    w.socket().emit('messages.update', [{ key, update: { message: null, messageStubType: proto.WebMessageInfo.StubType.REVOKE } }]);
    await w.settle();
    expect((await row()).status).toBe('DELETED');
    const history = await w.store.db
      .selectFrom('message_status')
      .select('status')
      .where('message_id', '=', (await row()).id)
      .orderBy('id')
      .execute();
    expect(history.map((h) => h.status)).toEqual(['EDITED', 'DELETED']);
    const deletes = await w.store.db.selectFrom('outbox').select('body').where('event', '=', 'MESSAGES_DELETE').execute();
    expect(deletes.map((d) => JSON.parse(d.body).data)).toEqual([
      expect.objectContaining({ ...key, key, status: 'DELETED', message: { conversation: 'hello' }, pushName: 'Maria' }),
    ]);
  });

  it('a deletion for everyone relays a REVOKE protocol message with a new id and the stanza edit "7"', async () => {
    const w = await connected();
    const sent = await w.connector.messaging.revoke!({ remoteJid: PN, fromMe: true, id: '3EB0OURKEY0000000001' });
    const [relayed] = w.socket().relayed;
    expect(relayed.jid).toBe(PN);
    expect(relayed.options).toEqual({ messageId: sent.keyId, additionalAttributes: { edit: '7' } });
    expect(sent.keyId).not.toBe('3EB0OURKEY0000000001');
    expect(relayed.message.protocolMessage).toMatchObject({
      key: { remoteJid: PN, fromMe: true, id: '3EB0OURKEY0000000001' },
      type: proto.Message.ProtocolMessage.Type.REVOKE,
    });
  });

  it('an edit relays a MESSAGE_EDIT protocol message carrying the new content, stanza edit "1"', async () => {
    const w = await connected();
    const before = Date.now();
    const sent = await w.connector.messaging.edit!({ remoteJid: PN, fromMe: true, id: '3EB0OURKEY0000000002' }, { conversation: 'fixed' });
    const [relayed] = w.socket().relayed;
    expect(relayed.options).toEqual({ messageId: sent.keyId, additionalAttributes: { edit: '1' } });
    const protocol = relayed.message.protocolMessage!;
    expect(protocol.type).toBe(proto.Message.ProtocolMessage.Type.MESSAGE_EDIT);
    expect(protocol.key).toMatchObject({ remoteJid: PN, fromMe: true, id: '3EB0OURKEY0000000002' });
    expect(protocol.editedMessage?.conversation).toBe('fixed');
    expect(Number(protocol.timestampMs)).toBeGreaterThanOrEqual(before);
  });

  it('WhatsApp refusing a change is a provider refusal (400), not a crash', async () => {
    const w = await connected();
    w.socket().relayError = boom('not-acceptable', 406);
    await expect(w.connector.messaging.revoke!({ remoteJid: PN, fromMe: true, id: 'X' })).rejects.toMatchObject({ code: 'provider_refused' });
  });

  it('blocks by the account WhatsApp knows (its own spelling); an unknown number and a refusal are 400s', async () => {
    const w = await connected();
    await w.connector.blocking!.updateBlockStatus('5511988887777@s.whatsapp.net', 'block');
    await w.connector.blocking!.updateBlockStatus('5511911110001@s.whatsapp.net', 'unblock');
    expect(w.socket().of('updateBlockStatus')).toEqual([
      ['551188887777@s.whatsapp.net', 'block'],
      ['5511911110001@s.whatsapp.net', 'unblock'],
    ]);
    await expect(w.connector.blocking!.updateBlockStatus('4915100000000@s.whatsapp.net', 'block')).rejects.toMatchObject({
      code: 'invalid_input',
      messages: ['number 4915100000000 is not on WhatsApp'],
    });
    w.socket().blockError = boom('bad-request', 400);
    await expect(w.connector.blocking!.updateBlockStatus('5511911110001@s.whatsapp.net', 'block')).rejects.toMatchObject({ code: 'provider_refused' });
  });

  it('downloads media from its directPath and decrypts it with Baileys; only WhatsApp media hosts are fetched', async () => {
    const { createServer } = await import('node:http');
    const { downloadMedia, mediaUrlOf } = await import('../../../src/connectors/whatsapp-web/message-actions.js');
    const plain = Buffer.from('a picture, as far as this test is concerned');
    const encrypted = await encryptMedia(plain, 'image');
    const served: string[] = [];
    const server = createServer((req, res) => {
      served.push(req.url ?? '');
      if (req.url === '/v/t62.7118-24/pic.enc') res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(encrypted.encrypted);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const node = { url: 'https://mmg.whatsapp.net/v/t62.7118-24/pic.enc', directPath: '/v/t62.7118-24/pic.enc', mediaKey: b64(encrypted.mediaKey) };

    expect((await downloadMedia(node, 'imageMessage', 1_000_000, base)).equals(plain)).toBe(true);
    expect(served).toEqual(['/v/t62.7118-24/pic.enc']);
    // A media key as an indexed object (Evolution's JSON of bytes) works too.
    const indexed = Object.fromEntries([...encrypted.mediaKey].map((byte, i) => [String(i), byte]));
    expect((await downloadMedia({ ...node, mediaKey: indexed }, 'imageMessage', 1_000_000, base)).equals(plain)).toBe(true);

    await expect(downloadMedia({ ...node, directPath: '/v/gone.enc' }, 'imageMessage', 1_000_000, base)).rejects.toMatchObject({ code: 'provider_refused' });
    await expect(downloadMedia({ ...node, mediaKey: undefined }, 'imageMessage', 1_000_000, base)).rejects.toMatchObject({ code: 'invalid_input' });
    // Larger than MEDIA_MAX_BYTES: a 400, without holding more than the limit.
    await expect(downloadMedia(node, 'imageMessage', 10, base)).rejects.toMatchObject({
      code: 'invalid_input',
      messages: [expect.stringMatching(/MEDIA_MAX_BYTES/)],
    });
    expect(mediaUrlOf({ directPath: '/v/x.enc' })).toBe('https://mmg.whatsapp.net/v/x.enc');
    expect(mediaUrlOf({ url: 'https://media-gru1-1.cdn.whatsapp.net/v/x.enc' })).toBe('https://media-gru1-1.cdn.whatsapp.net/v/x.enc');
    expect(() => mediaUrlOf({ url: `${base}/v/t62.7118-24/pic.enc` })).toThrow(/neither a directPath nor a WhatsApp media url/);
    expect(() => mediaUrlOf({ url: 'https://evil.example/whatsapp.net' })).toThrow(/neither a directPath/);
  });
});

describe('groups (at the Baileys socket boundary)', () => {
  it("each operation calls Baileys' group function and answers in the contract's shape", async () => {
    const w = await connected();
    const groups = w.connector.groups!;
    const created = await groups.create('Team', [PN]);
    expect(w.socket().of('groupCreate')).toEqual([['Team', [PN]]]);
    expect(created).toMatchObject({ id: GROUP, subject: 'Team', owner: LID, ownerPn: `${OWNER}@s.whatsapp.net`, size: 2, announce: false, restrict: false });
    expect(created.participants).toEqual([
      { id: LID, phoneNumber: `${OWNER}@s.whatsapp.net`, admin: 'superadmin' },
      { id: PN, admin: null },
    ]);
    await groups.updateSubject(GROUP, 'Team 2');
    await groups.updateDescription(GROUP, 'Rules');
    await groups.updateDescription(GROUP, '');
    expect(w.socket().of('groupUpdateSubject')).toEqual([[GROUP, 'Team 2']]);
    expect(w.socket().of('groupUpdateDescription')).toEqual([
      [GROUP, 'Rules'],
      [GROUP, undefined],
    ]);
    const jpeg = Buffer.from([0xff, 0xd8, 0xff]);
    await groups.updatePicture(GROUP, jpeg);
    expect(w.socket().of('updateProfilePicture')).toEqual([[GROUP, jpeg]]);
    expect(await groups.inviteCode(GROUP)).toBe('AbCdEfGhIjKlMnOpQrStUv');
    expect(await groups.revokeInvite(GROUP)).toBe('ZyXwVuTsRqPoNmLkJiHgFe');
    expect(await groups.inviteInfo('AbCdEfGhIjKlMnOpQrStUv')).toMatchObject({ id: GROUP, size: 40 });
    expect(await groups.acceptInvite('AbCdEfGhIjKlMnOpQrStUv')).toBe(GROUP);
    const all = await groups.participating();
    expect(all).toEqual([expect.objectContaining({ id: GROUP, announce: true, size: 2 })]);
    expect(await groups.updateParticipants(GROUP, [PN, LID], 'promote')).toEqual([
      { status: '200', jid: PN, content: { tag: 'participant', attrs: { jid: PN } } },
      { status: '409', jid: LID, content: { tag: 'participant', attrs: { jid: LID } } },
    ]);
    expect(w.socket().of('groupParticipantsUpdate')).toEqual([[GROUP, [PN, LID], 'promote']]);
    await groups.updateSetting(GROUP, 'announcement');
    await groups.toggleEphemeral(GROUP, 86400);
    await groups.leave(GROUP);
    expect(w.socket().of('groupSettingUpdate')).toEqual([[GROUP, 'announcement']]);
    expect(w.socket().of('groupToggleEphemeral')).toEqual([[GROUP, 86400]]);
    expect(w.socket().of('groupLeave')).toEqual([[GROUP]]);
    expect(await groups.pictureUrl(GROUP)).toBe(`https://pps.whatsapp.net/v/${GROUP.split('@')[0]}.jpg`);
  });

  it("WhatsApp's answers become the API's: unknown 404, refusal 400, a lost connection transient", async () => {
    const w = await connected();
    const groups = w.connector.groups!;
    await expect(groups.inviteInfo('NoSuchInviteCode000000')).rejects.toMatchObject({ code: 'not_found' });
    w.socket().groupError = boom('item-not-found', 404);
    await expect(groups.metadata('120363000000000001@g.us')).rejects.toMatchObject({ code: 'not_found' });
    w.socket().groupError = boom('not-authorized', 401);
    await expect(groups.updateSubject(GROUP, 'x')).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/not-authorized/) });
    w.socket().groupError = boom('forbidden', 403);
    await expect(groups.metadata(GROUP)).rejects.toMatchObject({ code: 'invalid_input' });
    w.socket().groupError = boom('Connection Closed', 428);
    await expect(groups.metadata(GROUP)).rejects.toBeInstanceOf(TransientConnectorError);
  });

  it('group metadata is cached for sends and reads, handed to Baileys as cachedGroupMetadata, and dropped on group events', async () => {
    const w = await connected();
    const groups = w.connector.groups!;
    const cachedGroupMetadata = w.socket().config.cachedGroupMetadata!;
    expect(await cachedGroupMetadata(GROUP)).toBeUndefined();
    await w.connector.messaging.send(outbound('3EB0CACHE00000000001', GROUP, textContent('one', undefined), { mentionsEveryOne: true }));
    await w.connector.messaging.send(outbound('3EB0CACHE00000000002', GROUP, textContent('two', undefined), { mentionsEveryOne: true }));
    await groups.metadata(GROUP);
    expect(w.socket().metadataFetches).toEqual([GROUP]);
    expect((await cachedGroupMetadata(GROUP))?.subject).toBe('Team');

    // A participants change drops it: the next read fetches it again, with the new participants.
    w.socket().groupParticipants = [...w.socket().groupParticipants, { id: '5511911110003@s.whatsapp.net' }];
    w.socket().emit('group-participants.update', { id: GROUP, author: LID, participants: [{ id: '5511911110003@s.whatsapp.net' }], action: 'add' });
    await w.settle();
    expect(await cachedGroupMetadata(GROUP)).toBeUndefined();
    expect((await groups.metadata(GROUP)).participants).toHaveLength(3);
    expect(w.socket().metadataFetches).toEqual([GROUP, GROUP]);

    // So does a change of the group's info, and a change made through the API.
    w.socket().emit('groups.update', [{ id: GROUP, subject: 'Renamed' }]);
    await w.settle();
    expect(await cachedGroupMetadata(GROUP)).toBeUndefined();
    await groups.metadata(GROUP);
    await groups.updateSetting(GROUP, 'locked');
    await groups.metadata(GROUP);
    expect(w.socket().metadataFetches).toEqual([GROUP, GROUP, GROUP, GROUP]);

    // A new group's metadata, as reported, is kept; so is every group listed by participating().
    w.socket().emit('groups.upsert', [{ id: '120363000000000002@g.us', subject: 'New', participants: [] } as never]);
    await w.settle();
    expect((await groups.metadata('120363000000000002@g.us')).subject).toBe('New');
    expect(w.socket().metadataFetches).toHaveLength(4);
  });

  it('GroupsModule through the deferred connector answers transient before the socket exists', async () => {
    const w = await world({ autoOpen: false });
    await expect(w.connector.groups!.metadata(GROUP)).rejects.toBeInstanceOf(TransientConnectorError);
  });
});
