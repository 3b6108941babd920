// The sandbox messenger network: its live connectors, linking (scan, auto-link), injection and media.
import { internal, invalidInput } from '../../core/errors.js';
import type { Config } from '../../platform/config.js';
import type { Logger } from '../../platform/logger.js';
import type { Instance } from '../../core/instance.js';
import type { Db } from '../../platform/store/db.js';
import type { BlockAction, Connector, ConnectorHost, Label, ProfileInfo } from '../../core/connector.js';
import { accountForms, NUMBER_RULE, parseNumber, parseUserAddress, userJid } from './addresses.js';
import { LinkCodes } from './codes.js';
import { SandboxConnector, type NetworkSide } from './connector.js';
import { newKeyId, newSandboxNumber } from './ids.js';
import { shapeInjected, type InjectInput } from './inject.js';
import { buttonResponse } from './press.js';
import { findMessageByKey } from '../../messages/records.js';
import { SandboxMediaStore, type UploadedMedia } from './media-store.js';
import { SandboxPictureStore } from './picture-store.js';
import { qrColour, renderQr } from '../qr-image.js';
import { SandboxRouter, type InstanceLookup, type LinkedParty } from './router.js';
import { readSession, sessionData, type SandboxSession } from './session.js';
import { SandboxBlocks } from './blocks.js';
import { SandboxLabels, type LabelEdit } from './labels.js';
import { downloadSandboxMedia } from './media-download.js';
import { SandboxGroupStore } from './group-store.js';
import { SandboxGroups } from './groups.js';
import { LocalSignals, type StoreSignals } from '../../platform/store/signals.js';
import { SandboxMailbox } from './mailbox.js';
import { SandboxDelivery } from './delivery.js';
import { handToHost } from './letters.js';
import { RemoteScans } from './remote-scan.js';

export interface SandboxNetworkDeps {
  db: Db;
  config: Config;
  host: ConnectorHost;
  lookup: InstanceLookup;
  logger: Logger;
  /** The fleet's side of the store (PostgreSQL: several nodes; SQLite: this one only); none: this process alone. */
  fleet?: {
    signals: StoreSignals;
    /** This node's incarnation. */
    incarnation: string;
    /** Whether other nodes may share the store. */
    shared: boolean;
  };
}

export interface LinkResult {
  instanceId: string;
  ownerJid: string;
  profileName: string;
}

export interface InjectResult {
  key: { remoteJid: string; fromMe: boolean; id: string };
  pushName: string | null;
  message: Record<string, unknown>;
  messageType: string;
  messageTimestamp: number;
}

const CODE_PROBLEM = 'code is unknown or expired; fetch a fresh QR code with GET /messenger/instance/connect/{instance}';
const maxProfileNameLength = 100;
/** How long a scan waits for the node of a fleet that shows the code to link its instance. */
const remoteScanTimeoutMs = 5_000;
/** Generated numbers collide only by chance (10 random digits); a few draws always suffice. */
const numberDraws = 20;

export class SandboxNetwork {
  private readonly live = new Map<string, SandboxConnector>();
  private readonly codes: LinkCodes;
  private readonly media: SandboxMediaStore;
  private readonly pictures: SandboxPictureStore;
  private readonly router: SandboxRouter;
  private readonly blocks: SandboxBlocks;
  private readonly labels: SandboxLabels;
  private readonly side: NetworkSide;
  private readonly mailbox: SandboxMailbox;
  /** Scans of codes shown on other nodes (a fleet only). */
  private readonly remoteScans: RemoteScans | null;
  /** Scans and auto-links run one at a time, so "is this number free" and "link it" cannot interleave. */
  private linking: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: SandboxNetworkDeps) {
    const { config, host, lookup, logger } = deps;
    this.codes = new LinkCodes(deps.db);
    // Several nodes sharing the store each have a DATA_DIR of their own: the files are kept in the store then.
    const sharedFiles = deps.fleet?.shared ? deps.db : undefined;
    this.media = new SandboxMediaStore(config.dataDir, () => config.serverUrl, sharedFiles);
    this.pictures = new SandboxPictureStore(config.dataDir, () => config.serverUrl, sharedFiles);
    const fleet = deps.fleet ?? { signals: new LocalSignals(), incarnation: 'this-process', shared: false };
    // What other nodes change (blocks, groups) is re-read here when they say so.
    const shared = { signals: fleet.signals, incarnation: fleet.incarnation, enabled: fleet.shared };
    this.blocks = new SandboxBlocks(deps.db, shared);
    this.labels = new SandboxLabels(deps.db);
    const isLocal = (id: string) => (this.live.get(id)?.linked() ?? null) !== null;
    this.mailbox = new SandboxMailbox({
      db: deps.db,
      signals: fleet.signals,
      incarnation: fleet.incarnation,
      deadAfterMs: config.nodeDeadAfterMs,
      fleet: fleet.shared,
      isLocal,
      localIds: () => this.linkedParties().map((party) => party.instanceId),
      deliver: (instanceId, letter) => handToHost(host, instanceId, letter),
      logger,
    });
    const delivery = new SandboxDelivery(host, this.mailbox, isLocal);
    this.remoteScans = fleet.shared
      ? new RemoteScans({
          signals: fleet.signals,
          incarnation: fleet.incarnation,
          timeoutMs: remoteScanTimeoutMs,
          scanHere: (code, number, profileName) => this.scanHere(code, number, profileName, 'null'),
          unanswered: () => invalidInput(CODE_PROBLEM),
        })
      : null;
    const groups = new SandboxGroups({
      store: new SandboxGroupStore(deps.db, shared),
      host,
      lookup,
      delivery,
      pictures: this.pictures,
      phoneOfLid: (lid) => this.router.alternateAddress(lid),
      logger,
    });
    this.router = new SandboxRouter({ host, lookup, logger, blocks: this.blocks, groups, delivery });
    if (qrColour(config.qrcodeColor) !== config.qrcodeColor) {
      logger.warn({ qrcodeColor: config.qrcodeColor }, 'QRCODE_COLOR is not a hex colour; using the default');
    }
    const colour = qrColour(config.qrcodeColor);
    this.side = {
      host,
      codes: this.codes,
      qr: { ttlMs: config.qrcodeTtlMs, limit: config.qrcodeLimit, render: (code) => renderQr(code, colour) },
      attach: (connector) => this.attach(connector),
      detach: (connector) => {
        if (this.live.get(connector.instanceId) === connector) this.live.delete(connector.instanceId);
      },
      send: (sender, message) => this.router.send(sender, message),
      markRead: (readerId, keys) => this.router.markRead(readerId, keys),
      sendPresence: (sender, chatJid, presence) => this.router.sendPresence(sender, chatJid, presence),
      setOwnPresence: async (sender, presence) =>
        this.router.setOwnPresence(sender, presence, [...this.linkedParties(), ...(await this.mailbox.partiesElsewhere())]),
      opened: (party) => this.mailbox.announce(party),
      closed: (instanceId) => this.mailbox.withdraw(instanceId),
      onWhatsApp: async (requests) => this.router.onWhatsApp(requests),
      alternateAddress: (jid) => this.router.alternateAddress(jid),
      uploadMedia: (encrypted, kind) => this.uploadMedia(encrypted, kind),
      profileOf: (jid) => this.profileOf(jid),
      pictures: this.pictures,
      change: (sender, target, change) => this.router.change(sender, target, change),
      updateBlockStatus: (blockerId, jid, action) => this.updateBlockStatus(blockerId, jid, action),
      labels: this.labels,
      downloadMedia: (node, mediaType, maxBytes) => downloadSandboxMedia((fileName) => this.media.read(fileName), node, mediaType, maxBytes),
      groups,
    };
  }

  /** Every instance live and linked on this node. */
  private linkedParties(): LinkedParty[] {
    return [...this.live.values()].map((connector) => connector.linked()).filter((party): party is LinkedParty => party !== null);
  }

  /** The connector of a SANDBOX instance; it replaces (and quiets) any earlier one of the same instance. */
  createConnector(instance: Instance): Connector {
    const connector = new SandboxConnector(instance, this.side, this.deps.logger);
    this.attach(connector);
    return connector;
  }

  /** What a phone scanning the QR code does: links the instance showing `code` to `number`. */
  async scan(code: string, number: string, profileName?: string): Promise<LinkResult> {
    const valid = typeof code === 'string' && code.trim() !== '' ? await this.codes.findValid(code.trim(), Date.now()) : null;
    // A code of an instance whose connector is not live here may be shown by another node of the fleet: that one links.
    if (valid && !this.live.has(valid.instanceId) && this.remoteScans) return this.remoteScans.scan(valid.code, number, profileName);
    return (await this.scanHere(code, number, profileName, 'answer')) as LinkResult;
  }

  /**
   * Links the instance showing `code` when its connector is live here. Otherwise a 400, or with `whenNotHere: 'null'`
   * (asked by another node, which answers the 400 itself if no node links) null.
   */
  private scanHere(code: string, number: string, profileName: string | undefined, whenNotHere: 'answer' | 'null'): Promise<LinkResult | null> {
    return this.serialized(async () => {
      const row = typeof code === 'string' && code.trim() !== '' ? await this.codes.findValid(code.trim(), Date.now()) : null;
      const connector = row ? this.live.get(row.instanceId) : undefined;
      // Only the code the instance shows right now links it (a stale row can't, nor one of a stopped instance).
      if (!row || !connector || connector.qr()?.code !== row.code) {
        if (whenNotHere === 'null') return null;
        throw invalidInput(CODE_PROBLEM);
      }
      const ownerJid = this.freeAddress(number, row.instanceId);
      const instance = this.deps.lookup.byId(row.instanceId);
      const session: SandboxSession = { ownerJid, profileName: profileNameOf(profileName, instance?.name ?? ownerJid.split('@')[0]) };
      // A newly linked account has WhatsApp Business's default labels.
      await this.labels.reset(row.instanceId);
      await this.deps.host.saveSession(row.instanceId, sessionData(session));
      await connector.link(session);
      return { instanceId: row.instanceId, ...session };
    });
  }

  /** Throws the 400 that `autoLink` would for `number` (its form, or held by another instance), before anything exists. */
  checkAutoLinkNumber(number: string): void {
    this.freeAddress(number, '');
  }

  /** Links without a QR code (SANDBOX_AUTO_LINK): to `number`, or to a generated unused one. */
  autoLink(instance: Instance, number?: string): Promise<LinkResult> {
    return this.serialized(async () => {
      if (instance.integration !== 'SANDBOX') throw invalidInput(`instance ${instance.name} is not a SANDBOX instance`);
      const stored = readSession(await this.deps.host.loadSession(instance.id));
      if (stored) throw invalidInput(`instance ${instance.name} is already linked`);
      const ownerJid = number !== undefined ? this.freeAddress(number, instance.id) : this.generatedAddress(instance.id);
      const session: SandboxSession = { ownerJid, profileName: instance.name };
      await this.labels.reset(instance.id);
      await this.deps.host.saveSession(instance.id, sessionData(session));
      const connector = this.live.get(instance.id);
      // A running connector goes open now; a created one is started (it finds the session and reports open);
      // without a connector here, the instance's next start() does that.
      if (connector?.isRunning()) await connector.link(session);
      else if (connector) await connector.start();
      else await this.codes.removeAllOf(instance.id);
      return { instanceId: instance.id, ...session };
    });
  }

  /** Simulates a message from any outside number to a linked sandbox instance. */
  async inject(instanceId: string, input: InjectInput): Promise<InjectResult> {
    const party = this.live.get(instanceId)?.linked();
    if (!party) {
      const name = this.deps.lookup.byId(instanceId)?.name ?? instanceId;
      throw invalidInput(`instance ${name} is not linked; scan its QR code first`);
    }
    const shaped = shapeInjected(input);
    if (shaped.remoteJid === party.ownerJid) throw invalidInput("from must be another number than the instance's own");
    const id = newKeyId();
    const timestamp = Math.floor(Date.now() / 1000);
    await this.deps.host.messageReceived(instanceId, {
      keyId: id,
      remoteJid: shaped.remoteJid,
      fromMe: false,
      pushName: shaped.pushName,
      messageType: shaped.messageType,
      content: shaped.content,
      timestamp,
    });
    return {
      key: { remoteJid: shaped.remoteJid, fromMe: false, id },
      pushName: shaped.pushName,
      message: shaped.content,
      messageType: shaped.messageType,
      messageTimestamp: timestamp,
    };
  }

  /**
   * What a phone does when its user presses a reply button of a buttons message it received: the instance sends the
   * sender an interactive response quoting it (reported as its own message, delivered to the sender when linked).
   */
  async press(instanceId: string, keyId: string, buttonId: string): Promise<InjectResult> {
    const party = this.live.get(instanceId)?.linked();
    const name = this.deps.lookup.byId(instanceId)?.name ?? instanceId;
    if (!party) throw invalidInput(`instance ${name} is not linked; scan its QR code first`);
    const found = await findMessageByKey(this.deps.db, instanceId, keyId);
    if (!found || found.fromMe) throw invalidInput(`keyId ${keyId} is not a message instance ${name} received`);
    const { messageType, content } = buttonResponse({ keyId, author: found.participant ?? found.remoteJid, content: found.content }, buttonId);
    const id = newKeyId();
    const timestamp = Math.floor(Date.now() / 1000);
    const message = { keyId: id, remoteJid: found.remoteJid, pushName: party.profileName, messageType, content, timestamp };
    await this.deps.host.messageReceived(instanceId, { ...message, fromMe: true });
    await this.router.send(party, { keyId: id, remoteJid: found.remoteJid, messageType, content });
    return { key: { remoteJid: found.remoteJid, fromMe: true, id }, pushName: party.profileName, message: content, messageType, messageTimestamp: timestamp };
  }

  /** Stores encrypted media on the sandbox "CDN"; `kind` is the media kind (image, video, …). */
  async uploadMedia(encrypted: Buffer, kind: string): Promise<UploadedMedia> {
    const uploaded = await this.media.upload(encrypted);
    this.deps.logger.debug({ kind, bytes: encrypted.length, directPath: uploaded.directPath }, 'sandbox media uploaded');
    return uploaded;
  }

  /** The media file named `fileName` (`<id>.enc`), or null for an unknown or malformed name. */
  readMedia(fileName: string): Promise<Buffer | null> {
    return this.media.read(fileName);
  }

  /** A profile picture file (`<id>.jpg`), or null for an unknown or malformed name. */
  readPicture(fileName: string): Promise<Buffer | null> {
    return this.pictures.read(fileName);
  }

  /**
   * What the phone does when its user creates, renames, recolours or deletes a label: the account's labels change, and
   * the instance hears of it (`labels.edit`).
   */
  async editLabel(instanceId: string, edit: LabelEdit): Promise<{ label: Label; created: boolean }> {
    if (!this.live.get(instanceId)?.linked()) {
      const name = this.deps.lookup.byId(instanceId)?.name ?? instanceId;
      throw invalidInput(`instance ${name} is not linked; scan its QR code first`);
    }
    const result = await this.labels.edit(instanceId, edit);
    await this.deps.host.labelChanged(instanceId, { kind: 'edit', label: result.label });
    return result;
  }

  /** Any valid phone address can be blocked (as on WhatsApp, whether or not a sandbox instance holds it). */
  private async updateBlockStatus(blockerId: string, jid: string, action: BlockAction): Promise<void> {
    const address = parseUserAddress(jid);
    if (address === null) throw invalidInput(`number ${jid} is not a phone address: ${NUMBER_RULE}`);
    if (action === 'block') await this.blocks.block(blockerId, address);
    else await this.blocks.unblock(blockerId, accountForms(address));
  }

  /** The profile of the account at `jid` (any spelling of it), from its live session or the stored one. */
  async profileOf(jid: string): Promise<ProfileInfo | null> {
    const address = parseUserAddress(jid);
    if (address === null) return null;
    const forms = accountForms(address);
    let session: SandboxSession | null = null;
    for (const connector of this.live.values()) {
      const own = connector.session();
      if (own && forms.includes(own.ownerJid)) session = own;
    }
    if (!session) {
      const instance = forms.map((form) => this.deps.lookup.byOwnerJid(form)).find((found) => found !== undefined);
      if (instance) session = readSession(await this.deps.host.loadSession(instance.id));
    }
    if (!session) return null;
    return {
      name: session.profileName,
      picture: session.pictureFile ? this.pictures.urlOf(session.pictureFile) : null,
      status: { status: session.profileStatus ?? null, setAt: session.statusSetAt ?? null },
      isBusiness: false,
    };
  }

  /** The instance as a party on the network when its connector is live and linked here. */
  linkedParty(instanceId: string): LinkedParty | null {
    return this.live.get(instanceId)?.linked() ?? null;
  }

  private attach(connector: SandboxConnector): void {
    const previous = this.live.get(connector.instanceId);
    if (previous && previous !== connector) previous.dispose();
    this.live.set(connector.instanceId, connector);
  }

  /** The address for `number` when it is valid and linked to no other sandbox instance; else a 400. */
  private freeAddress(number: string, instanceId: string): string {
    const digits = typeof number === 'string' ? parseNumber(number) : null;
    if (digits === null) throw invalidInput(NUMBER_RULE);
    const address = userJid(digits);
    if (this.ownerOf(address, instanceId)) throw invalidInput(`number ${digits} is already linked to another sandbox instance`);
    return address;
  }

  private generatedAddress(instanceId: string): string {
    for (let draw = 0; draw < numberDraws; draw++) {
      const address = userJid(newSandboxNumber());
      if (!this.ownerOf(address, instanceId)) return address;
    }
    throw internal('could not find an unused sandbox number');
  }

  /**
   * Whether another instance holds `address` or another spelling of the same account (a Brazilian mobile with or
   * without its ninth digit), per the registry or a live connector here: two instances on one account would take each
   * other's messages for "message yourself".
   */
  private ownerOf(address: string, instanceId: string): boolean {
    const forms = accountForms(address);
    for (const form of forms) {
      const registered = this.deps.lookup.byOwnerJid(form);
      if (registered && registered.id !== instanceId) return true;
    }
    for (const connector of this.live.values()) {
      const owner = connector.linked()?.ownerJid;
      if (connector.instanceId !== instanceId && owner !== undefined && forms.includes(owner)) return true;
    }
    return false;
  }

  private serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = this.linking.then(work, work);
    this.linking = run.catch(() => undefined);
    return run;
  }
}

function profileNameOf(given: string | undefined, fallback: string): string {
  if (given === undefined || given === null) return fallback;
  if (typeof given !== 'string') throw invalidInput('profileName must be a string');
  const trimmed = given.trim();
  if (trimmed.length > maxProfileNameLength) throw invalidInput(`profileName must be at most ${maxProfileNameLength} characters`);
  return trimmed === '' ? fallback : trimmed;
}
