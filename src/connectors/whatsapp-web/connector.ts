// The WHATSAPP-BAILEYS connector of one instance: at most one live Baileys socket, its lifecycle, sends and reports.
import type { ConnectionState as WaConnectionState, UserFacingSocketConfig } from 'baileys';
import {
  ProviderError,
  TransientConnectorError,
  type BlockingModule,
  type Connector,
  type ConnectorHost,
  type ContactsModule,
  type MediaModule,
  type MessagingModule,
  type PresenceModule,
  type PrivacyModule,
  type ProfileModule,
  type ChatsModule,
  type ConnectionProblem,
  type GroupsModule,
  type LabelsModule,
  type QrState,
} from '../../core/connector.js';
import type { ConnectionState, Instance, Settings } from '../../core/instance.js';
import type { Logger } from '../../platform/logger.js';
import { loadStoreAuth, type StoreAuth } from './auth-state.js';
import { delayFor } from '../../platform/util/backoff.js';
import { checkNumbers } from './contacts.js';
import { classifyClose, type CloseContext, type CloseDecision } from './disconnect.js';
import { BoundedMap } from './bounded-map.js';
import { bindInbound, type InboundContext } from './inbound/index.js';
import { AddressBook, ownerJidOf } from './jids.js';
import { mediaKinds, uploadEncrypted } from './media.js';
import type { WhatsAppWebConfig } from './options.js';
import { relayOutbound } from './outbound.js';
import { downloadMedia, editMessage, revokeMessage, updateBlockStatus } from './message-actions.js';
import { applyPrivacy } from './privacy.js';
import { fetchPrivacy, profileModule } from './profile.js';
import { chatsModule } from './chats.js';
import { GroupMetadataCache, groupsModule } from './groups.js';
import { labelsModule } from './labels.js';
import { QR_LIMIT_REASON, qrImage, qrLimitPayload, qrTerminal } from './qr.js';
import { SerialQueue } from '../../platform/util/keyed-serial-queue.js';
import { Settle } from './settle.js';
import { baileysLevel, socketConfig, waWebAddress } from './socket-config.js';
import type { SocketFactory, WaSocket } from './socket.js';
import { baileysProxy, type BaileysProxy } from './proxy.js';
import type { ProxySettings } from '../../core/proxy.js';
import { probeProxy } from '../../platform/net/proxy-probe.js';
import { proxyFailureOf } from '../../platform/net/proxy-failure.js';
import type { Dispatcher } from 'undici';
import { waWebVersion } from './version.js';
import { IdleWatchdog } from './watchdog.js';

export interface ConnectorDeps {
  config: WhatsAppWebConfig;
  logger: Logger;
  socketFactory: SocketFactory;
  /** Socket options a test adjusts (qrTimeout, connectTimeoutMs, …); applied last. */
  socketOverrides?: Partial<UserFacingSocketConfig>;
  /** How long start() waits for the first QR of an unlinked instance, so `/instance/connect` can answer with it. */
  firstQrWaitMs?: number;
  /** Jitter source (tests pin it). */
  random?: () => number;
}

export class WhatsAppWebConnector implements Connector {
  private status: ConnectionState = 'close';
  private socket: WaSocket | null = null;
  /** Bumped whenever the live socket changes: reports of an older socket are dropped (never two live sockets). */
  private generation = 0;
  /** The instance should be connected (start ran; no stop, logout or permanent close since). */
  private running = false;
  private auth: StoreAuth | null = null;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private lastHeard: number | null = null;
  private qrState: QrState | null = null;
  /** QR codes shown since linking began (across sockets), for QRCODE_LIMIT. */
  private qrCount = 0;
  /** QR codes the live socket produced. */
  private socketQrs = 0;
  private pairingCode: string | null = null;
  /** Why the pairing code of the live socket could not be had, when it was asked for and failed. */
  private pairingProblem: string | null = null;
  /** Why the last attempt failed (cleared once WhatsApp shows a QR or the connection opens). */
  private failure: ConnectionProblem | null = null;
  /** When the live socket was created: an attempt that has heard nothing for a while is reported as such. */
  private attemptStartedAt: number | null = null;
  /** The proxy the live socket goes through (read at each socket creation). */
  private proxy: BaileysProxy | null = null;
  private proxySettings: ProxySettings | null = null;
  /** Why the connection cannot open because of the proxy (unreachable, credentials refused), while that is so. */
  private proxyProblem: string | null = null;
  private readonly queue = new SerialQueue();
  private readonly changes = new Settle();
  /** Who sent recent group messages (key id → participant), so markRead can address their receipts. */
  private readonly senders = new BoundedMap<string, string>(5_000);
  private readonly addresses: AddressBook;
  /** Group metadata as last fetched or reported, dropped on the group's events (Baileys reads it for group sends). */
  private readonly groupCache = new GroupMetadataCache();
  private readonly watchdog: IdleWatchdog;
  private readonly log: Logger;
  private readonly baileysLog: Logger;

  constructor(
    private readonly instance: Instance,
    private readonly host: ConnectorHost,
    private readonly deps: ConnectorDeps,
  ) {
    this.log = deps.logger.child({ instance: instance.name, connector: 'whatsapp-web' });
    this.baileysLog = deps.logger.child({ instance: instance.name, component: 'baileys' }, { level: baileysLevel(deps.config.logLevel) });
    this.addresses = new AddressBook(async (lid) => (this.socket ? this.socket.signalRepository.lidMapping.getPNForLID(lid) : null));
    this.watchdog = new IdleWatchdog({
      idleMs: deps.config.waWeb.idleRestartMs,
      lastHeard: () => (this.status === 'open' ? this.lastHeard : null),
      onIdle: (silentMs) => this.restartIdle(silentMs),
    });
  }

  // ---- Connector ----

  async start(): Promise<void> {
    const linked = await this.queue.run(async () => {
      if (this.running) return true;
      this.running = true;
      this.attempt = 0;
      this.qrCount = 0;
      this.qrState = null;
      this.failure = null;
      try {
        this.auth = await loadStoreAuth(this.host, this.instance.id, this.baileysLog);
        this.status = 'connecting';
        await this.host.connectionChanged(this.instance.id, { state: 'connecting' });
        await this.openSocket();
      } catch (error) {
        await this.shutDown();
        throw error;
      }
      return this.auth?.linked() ?? false;
    });
    // Linking: give the first QR a moment to arrive so the caller (e.g. /instance/connect) can show it.
    if (!linked) await this.settle(this.firstQrWaitMs());
  }

  async stop(): Promise<void> {
    await this.queue.run(() => this.shutDown());
  }

  async logout(): Promise<void> {
    await this.queue.run(async () => {
      const socket = this.socket;
      const wasOpen = this.status === 'open';
      this.running = false;
      if (socket && wasOpen) {
        try {
          await socket.logout();
        } catch (error) {
          this.log.warn({ err: error }, 'unlinking from WhatsApp failed; forgetting the session anyway');
        }
      }
      await this.shutDown();
      // No key write is asked for after this; the session and its keys go in the logout's own unit (a crash between
      // two units left the account unlinked, still 'open', with no event).
      this.auth?.close();
      this.auth = null;
      await this.host.loggedOut(this.instance.id);
      this.log.info('logged out; session forgotten');
    });
  }

  state(): ConnectionState {
    return this.status;
  }

  qr(): QrState | null {
    return this.qrState;
  }

  lastActivityAt(): number | null {
    return this.lastHeard;
  }

  /**
   * Why the connection is not open: the last attempt's failure (while it waits to retry, and during the retry), or an
   * attempt that has heard nothing from WhatsApp for longer than the first-QR wait (a host that hangs).
   */
  problem(): ConnectionProblem | null {
    if (this.status === 'open') return null;
    if (this.failure) return this.failure;
    const started = this.attemptStartedAt;
    const silentMs = started === null ? 0 : Date.now() - started;
    if (this.status === 'connecting' && this.socket && this.lastHeard === null && this.qrState === null && silentMs + 100 >= this.firstQrWaitMs()) {
      const where = this.address().host;
      return {
        reason: `no answer from WhatsApp Web at ${where} for ${Math.round(silentMs / 1000)} s; still trying (one attempt gives up after ${Math.round(this.connectTimeoutMs() / 1000)} s)`,
        statusCode: 408,
      };
    }
    return null;
  }

  stateReason(): string | null {
    return this.status === 'open' ? null : this.proxyProblem;
  }

  /** The proxy changed: a running connection is replaced by one through the new proxy (the session is kept). */
  async proxyChanged(): Promise<void> {
    await this.queue.run(async () => {
      if (!this.running) return;
      this.log.info('the proxy changed; reconnecting through it');
      this.attempt = 0;
      this.proxyProblem = null;
      const wasOpen = this.status === 'open';
      this.status = 'connecting';
      if (wasOpen)
        await this.host.connectionChanged(this.instance.id, { state: 'connecting', reason: 'the proxy changed; reconnecting through it', statusReason: 200 });
      await this.openSocket();
    });
  }

  readonly messaging: MessagingModule = {
    send: async (message) => {
      const socket = this.liveSocket();
      await relayOutbound(socket, message, {
        loadMedia: (blobId) => this.host.loadMedia(blobId),
        groupMetadata: (jid) => this.groupCache.fetch(socket, jid),
      });
    },

    markRead: async (keys) => {
      const socket = this.liveSocket();
      if (keys.length === 0) return;
      await socket.readMessages(
        keys.map((k) => {
          const participant = this.senders.get(k.keyId);
          return { remoteJid: k.remoteJid, id: k.keyId, fromMe: false, ...(participant ? { participant } : {}) };
        }),
      );
    },

    /**
     * Uploads media when the send is accepted, if connected; otherwise (or if the upload fails) answers an empty
     * url so the media is uploaded when the message is sent.
     */
    uploadMedia: async (encrypted, kind) => {
      const mediaType = mediaKinds[`${kind}Message`];
      const socket = this.status === 'open' ? this.socket : null;
      if (!socket || !mediaType) return { url: '', directPath: '' };
      try {
        return await uploadEncrypted(socket.waUploadToServer, encrypted, mediaType);
      } catch (error) {
        this.log.warn({ err: error, kind }, 'media upload at accept time failed; it will be uploaded at send time');
        return { url: '', directPath: '' };
      }
    },

    revoke: (target) => revokeMessage(this.liveSocket(), target),
    edit: (target, content) => editMessage(this.liveSocket(), target, content),
  };

  readonly blocking: BlockingModule = {
    updateBlockStatus: (jid, action) => updateBlockStatus(this.liveSocket(), this.addresses, jid, action),
  };

  /** Downloads from WhatsApp's media host need no live connection (media re-upload requests are not made). */
  readonly media: MediaModule = {
    download: async (node, mediaType, maxBytes) => {
      const proxy = await this.host.proxy(this.instance.id);
      let dispatcher: Dispatcher | undefined;
      try {
        dispatcher = proxy ? this.proxyFor(proxy).dispatcher : undefined;
      } catch (error) {
        throw new ProviderError('failed', [`the media could not be downloaded: ${(proxy && proxyFailureOf(error, proxy)) ?? String(error)}`]);
      }
      return downloadMedia(node, mediaType, maxBytes, undefined, dispatcher);
    },
  };

  readonly presence: PresenceModule = {
    sendPresence: async (chatJid, presence) => {
      const socket = this.liveSocket();
      if (chatJid) await socket.sendPresenceUpdate(presence, chatJid);
      else await socket.sendPresenceUpdate(presence);
    },
    // No chat: the account's presence for everyone (Baileys sends it under the account's push name).
    setOwnPresence: async (presence) => {
      await this.liveSocket().sendPresenceUpdate(presence);
    },
  };

  readonly contacts: ContactsModule = {
    onWhatsApp: async (requests) => checkNumbers(this.liveSocket(), this.addresses, requests),
    alternateAddress: (jid) => this.addresses.alternateOf(jid),
  };

  readonly privacy: PrivacyModule = {
    updatePrivacy: async (settings) => {
      await applyPrivacy(this.liveSocket(), settings);
    },
    fetchPrivacy: () => fetchPrivacy(this.liveSocket()),
  };

  readonly profile: ProfileModule = profileModule(() => this.liveSocket());

  readonly chats: ChatsModule = chatsModule(() => this.liveSocket());

  readonly groups: GroupsModule = groupsModule(() => this.liveSocket(), this.groupCache);
  readonly labels: LabelsModule = labelsModule(() => this.liveSocket());

  // ---- lifecycle (always run inside the queue) ----

  private async openSocket(): Promise<void> {
    this.clearReconnect();
    await this.endSocket();
    const auth = this.auth;
    if (!this.running || !auth) return;
    const generation = ++this.generation;
    auth.resetUnlinked();
    const version = await waWebVersion(!this.deps.config.waWeb.webSocketUrl, this.log);
    const proxySettings = await this.host.proxy(this.instance.id);
    if (generation !== this.generation || !this.running) return;
    this.proxySettings = proxySettings;
    try {
      this.proxy = proxySettings ? this.proxyFor(proxySettings) : null;
    } catch (error) {
      // A proxy at an address the outbound guard refuses: no socket; the close says why.
      this.proxy = null;
      await this.onClose(generation, error);
      return;
    }
    let socket: WaSocket;
    try {
      socket = this.deps.socketFactory(
        socketConfig({
          auth: auth.state,
          logger: this.baileysLog,
          waWeb: this.deps.config.waWeb,
          version,
          settings: this.settings(),
          liveSettings: () => this.settings(),
          cachedGroupMetadata: async (jid) => this.groupCache.get(jid),
          pairing: this.pairingNumber() !== null,
          proxy: this.proxy,
          overrides: this.deps.socketOverrides,
        }),
      );
    } catch (error) {
      this.log.error({ err: error }, 'could not create the WhatsApp socket');
      await this.onClose(generation, error);
      return;
    }
    this.socket = socket;
    this.status = 'connecting';
    // What changed while no socket listened is unknown: groups are fetched afresh.
    this.groupCache.clear();
    this.watchGroups(socket, generation);
    this.socketQrs = 0;
    this.pairingCode = null;
    this.pairingProblem = null;
    this.lastHeard = null;
    this.attemptStartedAt = Date.now();
    socket.ws.on('frame', () => {
      if (generation === this.generation) this.lastHeard = Date.now();
    });
    socket.ev.on('connection.update', (update) =>
      this.schedule(generation, 'connection.update', true, () => this.onConnectionUpdate(generation, socket, update)),
    );
    socket.ev.on('creds.update', () => this.schedule(generation, 'creds.update', true, () => auth.saveCreds()));
    bindInbound(socket, this.inboundContext(socket), (name, work) => this.schedule(generation, name, false, work));
  }

  /** Keeps the group cache true: a group's events drop its metadata; a new group's metadata is kept as reported. */
  private watchGroups(socket: WaSocket, generation: number): void {
    const live = () => generation === this.generation;
    socket.ev.on('groups.upsert', (groups) => {
      if (live()) for (const group of groups) this.groupCache.set(group);
    });
    socket.ev.on('groups.update', (updates) => {
      if (live()) for (const update of updates) if (update.id) this.groupCache.drop(update.id);
    });
    socket.ev.on('group-participants.update', (event) => {
      if (live()) this.groupCache.drop(event.id);
    });
  }

  /**
   * Queues work from a socket. Connection work of a socket that is no longer the live one is dropped; messages and
   * other reports are kept (they were received, even if the socket closed since).
   */
  private schedule(generation: number, name: string, lifecycle: boolean, work: () => Promise<void>): void {
    if (generation !== this.generation) return;
    this.queue
      .run(async () => {
        if (lifecycle && generation !== this.generation) return;
        await work();
      })
      .catch((error: unknown) => this.log.error({ err: error, event: name }, 'handling a WhatsApp event failed'));
  }

  private async onConnectionUpdate(generation: number, socket: WaSocket, update: Partial<WaConnectionState>): Promise<void> {
    if (update.qr) await this.onQr(generation, socket, update.qr);
    if (generation !== this.generation) return;
    if (update.connection === 'open') await this.onOpen(socket);
    else if (update.connection === 'close') await this.onClose(generation, update.lastDisconnect?.error);
  }

  private async onQr(generation: number, socket: WaSocket, code: string): Promise<void> {
    this.qrCount += 1;
    this.socketQrs += 1;
    if (this.qrCount > this.deps.config.qrcodeLimit) {
      await this.giveUpLinking();
      return;
    }
    const number = this.pairingNumber();
    if (number && this.pairingCode === null) {
      try {
        this.pairingCode = await socket.requestPairingCode(number);
        this.pairingProblem = null;
      } catch (error) {
        this.pairingProblem = `WhatsApp gave no pairing code for ${number}: ${error instanceof Error ? error.message : String(error)}; the QR code still works`;
        this.log.warn({ err: error }, 'requesting a pairing code failed; the QR code still works');
      }
    }
    const base64 = await qrImage(code, this.deps.config.qrcodeColor);
    if (generation !== this.generation) return;
    // WhatsApp answered: whatever failed before is over.
    this.failure = null;
    this.qrState = {
      code,
      base64,
      count: this.qrCount,
      pairingCode: this.pairingCode,
      ...(number && this.pairingCode === null && this.pairingProblem ? { pairingProblem: this.pairingProblem } : {}),
    };
    this.log.info({ count: this.qrCount }, 'QR code updated');
    if (this.log.isLevelEnabled('debug')) {
      this.log.debug(`QR code ${this.qrCount} (scan it in WhatsApp > Linked devices):\n${await qrTerminal(code)}`);
    }
    try {
      await this.host.qrUpdated(this.instance.id, this.qrState);
    } finally {
      this.notify();
    }
  }

  /** QRCODE_LIMIT reached: tell clients as Evolution does (limit message, `refused`), then close. */
  private async giveUpLinking(): Promise<void> {
    this.log.warn({ limit: this.deps.config.qrcodeLimit }, 'QR code limit reached; stopped linking');
    await this.shutDown();
    this.auth = null;
    this.failure = { reason: QR_LIMIT_REASON, statusCode: 428 };
    await this.host.eventOccurred(this.instance.id, 'QRCODE_UPDATED', qrLimitPayload);
    await this.host.eventOccurred(this.instance.id, 'CONNECTION_UPDATE', { instance: this.name(), state: 'refused', statusReason: 428 });
    await this.host.connectionChanged(this.instance.id, { state: 'close', reason: QR_LIMIT_REASON, statusReason: 428 });
  }

  private async onOpen(socket: WaSocket): Promise<void> {
    this.status = 'open';
    this.failure = null;
    this.attempt = 0;
    this.qrState = null;
    this.qrCount = 0;
    this.lastHeard = Date.now();
    this.proxyProblem = null;
    const me = socket.user ?? this.auth?.state.creds.me;
    const ownerJid = ownerJidOf(me?.id);
    const name = me?.name ?? me?.notify;
    const profileName = name && name !== '~' ? name : null;
    await this.auth?.saveCreds();
    this.watchdog.start();
    this.log.info({ ownerJid }, 'WhatsApp connection open');
    try {
      await this.host.connectionChanged(this.instance.id, { state: 'open', ownerJid, profileName, statusReason: 200 });
    } finally {
      this.notify();
    }
  }

  private async onClose(generation: number, error: unknown): Promise<void> {
    if (generation !== this.generation) return;
    this.watchdog.stop();
    this.socket = null;
    this.qrState = null;
    const decision = classifyClose(error, this.closeContext());
    if (!this.running) {
      this.status = 'close';
      this.notify();
      return;
    }
    this.log.warn({ statusCode: decision.statusCode, kind: decision.kind }, `WhatsApp connection closed: ${decision.reason}`);
    switch (decision.kind) {
      case 'logged-out':
        if (this.auth?.linked()) await this.forgetAfterPhoneLogout(decision);
        else await this.stopWith(decision);
        return;
      case 'permanent':
      case 'replaced':
        await this.stopWith(decision);
        return;
      case 'restart':
        // The first one at once (WhatsApp asks for it after pairing); a repeated one waits like any other close.
        if (this.attempt === 0) {
          this.attempt = 1;
          await this.openSocket();
        } else {
          await this.reconnectLater(decision);
        }
        return;
      case 'transient':
      case 'unreachable':
        {
          // Through a proxy, the proxy is named (it cannot be reached, or refused the credentials or the tunnel).
          const fromProxy = await this.proxyFailed(error);
          if (fromProxy) {
            await this.reconnectLater({ ...decision, reason: fromProxy.reason, statusCode: 503 });
            return;
          }
        }
        await this.reconnectLater(decision);
        return;
    }
  }

  /**
   * Why the close came from the proxy (it cannot be reached, or it refused the credentials or the tunnel), or null; the
   * reason is kept for the state (`stateReason`) until the connection opens.
   */
  private async proxyFailed(error: unknown): Promise<{ reason: string; isNew: boolean } | null> {
    const settings = this.proxySettings;
    if (!settings) return null;
    const reason = proxyFailureOf(error, settings) ?? (await probeProxy(settings, { denyPrivate: this.deps.config.outboundDenyPrivate ?? false }));
    if (!reason) return null;
    const isNew = reason !== this.proxyProblem;
    if (isNew) this.log.warn({ reason }, 'the WhatsApp connection cannot go through the proxy');
    this.proxyProblem = reason;
    return { reason, isNew };
  }

  /** The agent and dispatcher of a proxy (shared by every connection through the same proxy). */
  private proxyFor(settings: ProxySettings): BaileysProxy {
    return baileysProxy(settings, this.deps.config.outboundDenyPrivate ?? false);
  }

  /**
   * Waits, then tries again. Every failed attempt is reported (state `connecting` with the reason and code), so the
   * state, the list and the `connection.update` events say why the instance is not connected, on every attempt.
   */
  private async reconnectLater(decision: CloseDecision): Promise<void> {
    // The QR references of a socket ran out (408 while linking): fresh codes at once; the QR limit bounds this.
    if (this.socketQrs > 0 && decision.statusCode === 408 && !this.auth?.linked()) {
      await this.openSocket();
      return;
    }
    this.attempt += 1;
    const { reconnectBaseMs, reconnectMaxMs } = this.deps.config.waWeb;
    // Doubling, jittered into the upper half of each step, so many instances never reconnect in step.
    const delayMs = delayFor({ initialMs: reconnectBaseMs, maxMs: reconnectMaxMs, factor: 2, jitter: 'upper-half' }, this.attempt, this.deps.random);
    this.status = 'connecting';
    this.failure = { reason: decision.reason, statusCode: decision.statusCode, retryAt: Date.now() + delayMs };
    this.log.warn({ attempt: this.attempt, delayMs, statusCode: decision.statusCode }, `reconnecting to WhatsApp after a wait: ${decision.reason}`);
    await this.host.connectionChanged(this.instance.id, { state: 'connecting', reason: decision.reason, statusReason: decision.statusCode });
    this.clearReconnect();
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.queue
        .run(async () => {
          if (this.running && !this.socket) await this.openSocket();
        })
        .catch((error: unknown) => this.log.error({ err: error }, 'reconnecting failed'));
    }, delayMs);
    this.reconnectTimer.unref();
    this.notify();
  }

  /** Permanent close: stop, keep the session (an operator may retry with restart), report it. */
  private async stopWith(decision: CloseDecision): Promise<void> {
    await this.shutDown();
    this.failure = { reason: decision.reason, statusCode: decision.statusCode };
    await this.reportClosedStatus(decision);
    await this.host.connectionChanged(this.instance.id, { state: 'close', reason: decision.reason, statusReason: decision.statusCode });
  }

  /** The phone removed this device: the session is useless, forget it and let the core record the logout. */
  private async forgetAfterPhoneLogout(decision: CloseDecision): Promise<void> {
    await this.shutDown();
    this.auth?.close();
    this.auth = null;
    await this.reportClosedStatus(decision);
    await this.host.loggedOut(this.instance.id);
  }

  private async reportClosedStatus(decision: CloseDecision): Promise<void> {
    await this.host.eventOccurred(this.instance.id, 'STATUS_INSTANCE', {
      instance: this.name(),
      status: 'closed',
      disconnectionAt: new Date().toISOString(),
      disconnectionReasonCode: decision.statusCode,
      disconnectionObject: JSON.stringify({ reason: decision.reason, statusCode: decision.statusCode }),
    });
  }

  /** The connection says "open" but WhatsApp has been silent too long: replace the socket and say so. */
  private restartIdle(silentMs: number): void {
    const generation = this.generation;
    this.queue
      .run(async () => {
        if (generation !== this.generation || this.status !== 'open' || !this.running) return;
        const reason = `no traffic from WhatsApp for ${Math.round(silentMs / 1000)} s; reconnecting`;
        this.log.warn({ silentMs }, 'WhatsApp connection idle too long; restarting it');
        this.status = 'connecting';
        await this.host.connectionChanged(this.instance.id, { state: 'connecting', reason, statusReason: 408 });
        await this.openSocket();
      })
      .catch((error: unknown) => this.log.error({ err: error }, 'restarting an idle connection failed'));
  }

  private async shutDown(): Promise<void> {
    this.running = false;
    this.clearReconnect();
    this.watchdog.stop();
    await this.endSocket();
    this.status = 'close';
    this.qrState = null;
    this.qrCount = 0;
    this.attemptStartedAt = null;
    this.notify();
  }

  /** Ends the live socket (if any) before anything else may open one. */
  private async endSocket(): Promise<void> {
    const socket = this.socket;
    this.socket = null;
    this.generation += 1;
    this.watchdog.stop();
    if (!socket) return;
    try {
      await socket.end(undefined);
    } catch (error) {
      this.log.debug({ err: error }, 'ending the WhatsApp socket failed');
    }
  }

  private clearReconnect(): void {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
  }

  // ---- helpers ----

  private liveSocket(): WaSocket {
    if (this.status !== 'open' || !this.socket) throw new TransientConnectorError('the WhatsApp connection is not open');
    return this.socket;
  }

  private address(): URL {
    return waWebAddress(this.deps.config.waWeb);
  }

  private connectTimeoutMs(): number {
    return this.deps.socketOverrides?.connectTimeoutMs ?? this.deps.config.waWeb.connectTimeoutMs;
  }

  private firstQrWaitMs(): number {
    return this.deps.firstQrWaitMs ?? 5_000;
  }

  private closeContext(): CloseContext {
    return { address: this.address(), timeoutMs: this.connectTimeoutMs() };
  }

  private settings(): Settings {
    return this.host.currentInstance(this.instance.id)?.settings ?? this.instance.settings;
  }

  private name(): string {
    return this.host.currentInstance(this.instance.id)?.name ?? this.instance.name;
  }

  /** Digits of the instance's number when it asks for a pairing code instead of (besides) the QR. */
  private pairingNumber(): string | null {
    const number = this.host.currentInstance(this.instance.id)?.number ?? this.instance.number;
    const digits = number?.replace(/\D/g, '') ?? '';
    return digits.length >= 8 ? digits : null;
  }

  private inboundContext(socket: WaSocket): InboundContext {
    return {
      instanceId: this.instance.id,
      instanceName: this.name(),
      host: this.host,
      settings: () => this.settings(),
      addresses: this.addresses,
      socket,
      logger: this.log,
      rememberSender: (keyId, participant) => this.senders.set(keyId, participant),
    };
  }

  /** Resolves when a QR is showing, the connection opened or closed, an attempt failed (a retry waits), or after `timeoutMs`. */
  private settle(timeoutMs: number): Promise<void> {
    return this.changes.until(() => this.qrState !== null || this.status !== 'connecting' || this.reconnectTimer !== undefined, timeoutMs);
  }

  private notify(): void {
    this.changes.notify();
  }
}
