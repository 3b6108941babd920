// The ConnectorHost: turns what connectors report into stored state and events (connection, messages, receipts, sessions).
import { timeOrderedId } from '../platform/util/time-ordered-id.js';
import type { Logger } from '../platform/logger.js';
import type { Db } from '../platform/store/db.js';
import { inUnit } from '../platform/store/unit.js';
import { BatchCommit, GroupCommit } from '../platform/store/group-commit.js';
import { ReportBatcher } from './report-batcher.js';
import type { EventWriter } from '../events/writer.js';
import type { ConnectionReport, ConnectorHost, InboundMessage, LabelChange, MessageChange, Presence, QrState, SessionKeyStore } from '../core/connector.js';
import type { EventName } from '../core/event-catalog.js';
import type { Unit } from '../platform/store/unit.js';
import type { MessageStatus } from '../core/message-status.js';
import type { StatusRecorder } from '../messages/status-recorder.js';
import type { StoredMessageHook } from '../messages/stored-message-hook.js';
import type { MessageChanges } from '../messages/message-changes.js';
import { presentMessage, rowFromRecord, type MessageRecord } from '../messages/records.js';
import { sourceOfId } from '../messages/ids.js';
import type { ConnectionChange, InstanceRegistry } from './registry.js';
import { removeSessionsOf, type SessionStore } from './sessions.js';
import type { ConnectionState, Instance } from '../core/instance.js';
import { eventSourceOf } from '../core/event-envelope.js';
import type { ProxySettings } from '../core/proxy.js';
import type { ProxyStore } from './proxies.js';
import type { OwnershipFence } from '../platform/cluster/ownership-fence.js';

export interface ConnectorHostDeps {
  db: Db;
  logger: Logger;
  registry: InstanceRegistry;
  events: EventWriter;
  statuses: StatusRecorder;
  sessions: SessionStore;
  /** What is kept with each received message (chats, contacts). */
  alongside?: StoredMessageHook;
  /** Whether received messages are stored (DATABASE_SAVE_DATA_NEW_MESSAGE). */
  keepReceived?: boolean;
  /** Stores edits and deletions for everyone of stored messages, and announces them. */
  changes: MessageChanges;
  /** Each instance's proxy. */
  proxies: ProxyStore;
  /** Stores the labels and chat labels connectors report, and announces what changed. */
  labels: LabelKeeper;
  /** Connection changes pass it: a node that lost the instance cannot change its stored state. */
  fence?: OwnershipFence;
}

/** Keeps an instance's labels and its chats' labels (history/label-book.ts). */
export interface LabelKeeper {
  changed(instance: Instance, change: LabelChange): Promise<void>;
}

/** Connection changes stored together at most (many instances opening at once). */
const maxConnectionBatch = 2000;

/** Told when an instance's connection opens or closes (after it is stored; a logout before). */
export type ConnectionListener = (instanceId: string, state: ConnectionState) => Promise<void> | void;

export class InstanceConnectorHost implements ConnectorHost {
  /** Presence and plain events of all instances share transactions. */
  private readonly commits: GroupCommit;
  /** Received messages and receipts of all instances, recorded in bulk. */
  private readonly reports: ReportBatcher;
  private readonly connectionListeners: ConnectionListener[] = [];
  /** Connection changes of all instances: those reported in one turn are stored in one transaction. */
  private readonly connections: BatchCommit<{ instance: Instance; change: ConnectionReport }, Instance>;

  constructor(private readonly deps: ConnectorHostDeps) {
    this.commits = new GroupCommit(deps.db);
    this.connections = new BatchCommit(deps.db, inUnit, (unit, changes) => this.storeConnections(unit, changes), maxConnectionBatch);
    this.reports = new ReportBatcher({
      db: deps.db,
      events: deps.events,
      statuses: deps.statuses,
      sourceOf: (instance) => this.source(instance),
      alongside: deps.alongside,
      keepReceived: deps.keepReceived,
    });
  }

  /** The instance lifecycle listens here, to pause and resume send workers. */
  onConnection(listener: ConnectionListener): void {
    this.connectionListeners.push(listener);
  }

  async connectionChanged(instanceId: string, change: ConnectionReport): Promise<void> {
    const instance = this.deps.registry.byInstanceId(instanceId);
    if (!instance) return;
    const updated = await this.connections.submit({ instance, change });
    this.deps.logger.info({ instance: updated.name, state: change.state }, 'connection state changed');
    await this.tellConnection(instanceId, change.state);
  }

  /** Stores connection changes (each passing the fence) with their `connection.update`, in one unit, in order. */
  private async storeConnections(unit: Unit, changes: readonly { instance: Instance; change: ConnectionReport }[]): Promise<Instance[]> {
    await this.deps.fence?.checkMany(
      unit.tx,
      changes.map(({ instance }) => instance.id),
    );
    const stored = await this.deps.registry.updateConnections(
      unit,
      changes.map(({ instance, change }) => ({
        instance,
        change: {
          status: change.state,
          ownerJid: change.ownerJid,
          profileName: change.profileName,
          disconnectionReason: change.reason ?? null,
        } satisfies ConnectionChange,
      })),
    );
    changes.forEach(({ change }, i) => {
      const next = stored[i];
      this.deps.events.emit(unit, this.source(next), 'CONNECTION_UPDATE', {
        instance: next.name,
        state: change.state,
        statusReason: change.statusReason ?? (change.state === 'open' ? 200 : change.state === 'connecting' ? 200 : 401),
        ...(change.state === 'open' ? { wuid: next.ownerJid, profileName: next.profileName, profilePictureUrl: next.profilePicUrl } : {}),
        ...(change.reason ? { reason: change.reason } : {}),
      });
    });
    return stored;
  }

  async qrUpdated(instanceId: string, qr: QrState): Promise<void> {
    const instance = this.deps.registry.byInstanceId(instanceId);
    if (!instance) return;
    await inUnit(this.deps.db, async (unit) => {
      this.deps.events.emit(unit, this.source(instance), 'QRCODE_UPDATED', {
        qrcode: { instance: instance.name, pairingCode: qr.pairingCode, code: qr.code, base64: qr.base64 },
      });
    });
  }

  async messageReceived(instanceId: string, message: InboundMessage): Promise<void> {
    const instance = this.deps.registry.byInstanceId(instanceId);
    if (!instance) return;
    // The same message delivered twice (a retried send) is stored and announced once.
    await this.reports.received(instance, this.inboundRecord(instanceId, message));
  }

  private inboundRecord(instanceId: string, message: InboundMessage): MessageRecord {
    return {
      id: timeOrderedId(),
      instanceId,
      keyId: message.keyId,
      remoteJid: message.remoteJid,
      remoteJidAlt: message.remoteJidAlt ?? null,
      fromMe: message.fromMe,
      participant: message.participant ?? null,
      participantAlt: message.participantAlt ?? null,
      pushName: message.pushName,
      messageType: message.messageType,
      content: message.content,
      status: message.fromMe ? 'SERVER_ACK' : 'DELIVERY_ACK',
      timestamp: message.timestamp,
      source: sourceOfId(message.keyId),
    };
  }

  /** Stores a message unless it is already stored (same instance, key id and direction); true when stored. */
  private async insertOnce(unit: Unit, record: MessageRecord): Promise<boolean> {
    const inserted = await unit.tx
      .insertInto('messages')
      .values(rowFromRecord(record))
      .onConflict((oc) => oc.columns(['instance_id', 'key_id', 'from_me']).doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  async labelChanged(instanceId: string, change: LabelChange): Promise<void> {
    const instance = this.deps.registry.byInstanceId(instanceId);
    if (!instance) return;
    await this.deps.labels.changed(instance, change);
  }

  async eventOccurred(instanceId: string, event: EventName, data: unknown): Promise<void> {
    const instance = this.deps.registry.byInstanceId(instanceId);
    if (!instance) return;
    await this.commits.run(async (unit) => {
      this.deps.events.emit(unit, this.source(instance), event, data);
    });
  }

  async messagesSynced(instanceId: string, messages: InboundMessage[]): Promise<void> {
    const instance = this.deps.registry.byInstanceId(instanceId);
    if (!instance || messages.length === 0) return;
    const alongside = this.deps.alongside;
    await alongside?.ready(instanceId);
    await inUnit(this.deps.db, async (unit) => {
      const stored = [];
      for (const message of messages) {
        const record = this.inboundRecord(instanceId, message);
        if (!(await this.insertOnce(unit, record))) continue;
        stored.push(presentMessage(record));
        // Their chats and contacts are kept too, so the find routes show the synced conversations.
        alongside?.stored(unit, record, unit, 'synced');
      }
      if (stored.length > 0) this.deps.events.emit(unit, this.source(instance), 'MESSAGES_SET', stored);
    });
  }

  currentInstance(instanceId: string): Instance | undefined {
    return this.deps.registry.byInstanceId(instanceId);
  }

  async providerToken(instanceId: string): Promise<string | null> {
    const instance = this.deps.registry.byInstanceId(instanceId);
    return instance ? this.deps.registry.providerTokenOf(instance) : null;
  }

  proxy(instanceId: string): Promise<ProxySettings | null> {
    return this.deps.proxies.inEffect(instanceId);
  }

  async loadMedia(blobId: string): Promise<Buffer | null> {
    const row = await this.deps.db.selectFrom('media_blobs').select('data').where('id', '=', blobId).executeTakeFirst();
    return row ? Buffer.from(row.data) : null;
  }

  get sessionKeys(): SessionKeyStore {
    return this.deps.sessions.keys;
  }

  async messageStatus(instanceId: string, keyId: string, status: MessageStatus, detail?: string): Promise<void> {
    const instance = this.deps.registry.byInstanceId(instanceId);
    if (!instance) return;
    await this.reports.status(instance, keyId, status, detail);
  }

  /** Edits are announced as `messages.edited`, deletions as `messages.delete` only (never as an edit too). */
  async messageChanged(instanceId: string, change: MessageChange): Promise<void> {
    const instance = this.deps.registry.byInstanceId(instanceId);
    if (!instance) return;
    if (change.kind === 'revoke') await this.deps.changes.revoked(instance, change.key);
    else await this.deps.changes.edited(instance, change.key, change.content, change.timestampMs, 'MESSAGES_EDITED');
  }

  async presenceReceived(instanceId: string, chatJid: string, senderJid: string, presence: Presence): Promise<void> {
    const instance = this.deps.registry.byInstanceId(instanceId);
    if (!instance) return;
    await this.commits.run(async (unit) => {
      this.deps.events.emit(unit, this.source(instance), 'PRESENCE_UPDATE', {
        id: chatJid,
        presences: { [senderJid]: { lastKnownPresence: presence } },
      });
    });
  }

  async loggedOut(instanceId: string): Promise<void> {
    const instance = this.deps.registry.byInstanceId(instanceId);
    if (!instance) return;
    await this.tellConnection(instanceId, 'close');
    const logout = () =>
      inUnit(this.deps.db, async (unit) => {
        await this.deps.fence?.check(unit.tx, instanceId);
        await removeSessionsOf(unit, instance);
        const next = await this.deps.registry.updateConnection(unit, instance, {
          status: 'close',
          ownerJid: null,
          profileName: null,
          profilePicUrl: null,
          disconnectionReason: 'logged out',
        });
        const source = this.source(instance);
        this.deps.events.emit(unit, source, 'LOGOUT_INSTANCE', null);
        this.deps.events.emit(unit, source, 'CONNECTION_UPDATE', { instance: next.name, state: 'close', statusReason: 401 });
      });
    // After the session-key writes asked for before (queued per instance): none lands after the logout.
    await this.deps.sessions.afterKeyWrites(instanceId, logout);
    this.deps.logger.info({ instance: instance.name }, 'instance logged out');
  }

  loadSession(instanceId: string): Promise<Record<string, unknown> | null> {
    return this.deps.sessions.load(instanceId);
  }

  saveSession(instanceId: string, data: Record<string, unknown> | null): Promise<void> {
    return this.deps.sessions.save(instanceId, data);
  }

  private async tellConnection(instanceId: string, state: ConnectionState): Promise<void> {
    for (const listener of this.connectionListeners) await listener(instanceId, state);
  }

  private source(instance: Instance) {
    return eventSourceOf(instance, (i) => this.deps.registry.apikeyOf(i));
  }
}
