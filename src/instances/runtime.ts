// Live side of instances: one connector each, their lifecycle, and the host that turns connector reports into state and events.
import { timeOrderedId } from '../platform/util/time-ordered-id.js';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { Db } from '../platform/store/db.js';
import { inUnit } from '../platform/store/unit.js';
import { GroupCommit } from '../platform/store/group-commit.js';
import { ReportBatcher } from './report-batcher.js';
import { KeyedSerialQueue } from '../platform/util/keyed-serial-queue.js';
import type { EventWriter } from '../events/writer.js';
import type { Connector, ConnectorFactory, ConnectorHost, InboundMessage, Presence, QrState, SessionKeyStore } from '../core/connector.js';
import type { EventName } from '../core/event-catalog.js';
import type { Unit } from '../platform/store/unit.js';
import type { MessageStatus } from '../core/message-status.js';
import type { StatusRecorder } from '../messages/status-recorder.js';
import { presentMessage, rowFromRecord, type MessageRecord } from '../messages/records.js';
import { sourceOfId } from '../messages/ids.js';
import type { SendWorkers } from '../messages/send-worker.js';
import type { InstanceRegistry } from './registry.js';
import type { ConnectionState, Instance, Integration } from '../core/instance.js';
import { eventSourceOf } from '../core/event-envelope.js';

export interface RuntimeDeps {
  db: Db;
  config: Config;
  logger: Logger;
  registry: InstanceRegistry;
  events: EventWriter;
  statuses: StatusRecorder;
  workers: SendWorkers;
  factories: Record<Integration, ConnectorFactory>;
}

export class InstanceRuntime implements ConnectorHost {
  private readonly connectors = new Map<string, Connector>();
  /** Presence and plain events of all instances share transactions. */
  private readonly commits: GroupCommit;
  /** Received messages and receipts of all instances, recorded in bulk. */
  private readonly reports: ReportBatcher;
  /** Session key writes of each instance, applied in the order asked. */
  private readonly keyWrites = new KeyedSerialQueue();

  constructor(private readonly deps: RuntimeDeps) {
    this.commits = new GroupCommit(deps.db);
    this.reports = new ReportBatcher({ db: deps.db, events: deps.events, statuses: deps.statuses, sourceOf: (instance) => this.source(instance) });
  }

  connectorOf(instanceId: string): Connector | undefined {
    return this.connectors.get(instanceId);
  }

  /** Creates the connector of an instance (idempotent). */
  attach(instance: Instance): Connector {
    let connector = this.connectors.get(instance.id);
    if (!connector) {
      connector = this.deps.factories[instance.integration](instance, this);
      this.connectors.set(instance.id, connector);
    }
    return connector;
  }

  /** At start: every instance gets its connector; those with a session (or always-on kinds) connect. */
  async startAll(): Promise<void> {
    for (const instance of this.deps.registry.all()) {
      const connector = this.attach(instance);
      const session = await this.loadSession(instance.id);
      const alwaysOn = instance.integration === 'EVOLUTION' || instance.integration === 'WHATSAPP-BUSINESS';
      if (session || alwaysOn || instance.status !== 'close') {
        await connector.start().catch((error: unknown) =>
          this.deps.logger.error({ err: error, instance: instance.name }, 'instance failed to start'),
        );
      }
    }
  }

  async connect(instance: Instance): Promise<Connector> {
    const connector = this.attach(instance);
    if (connector.state() === 'close') await connector.start();
    return connector;
  }

  async restart(instance: Instance): Promise<Connector> {
    const connector = this.attach(instance);
    await connector.stop();
    await connector.start();
    return connector;
  }

  async logout(instance: Instance): Promise<void> {
    await this.attach(instance).logout();
  }

  /**
   * Closes and forgets the connector of a deleted instance: a connected or connecting one logs out first (as Evolution
   * does), one already closed is only stopped (no logout events for an account that is not linked).
   */
  async detach(instance: Instance): Promise<void> {
    const connector = this.connectors.get(instance.id);
    this.connectors.delete(instance.id);
    await this.deps.workers.pause(instance.id);
    if (!connector) return;
    if (connector.state() === 'close') await connector.stop().catch(() => undefined);
    else await connector.logout().catch(() => connector.stop());
  }

  async stopAll(): Promise<void> {
    const all = [...this.connectors.values()];
    await Promise.all(all.map((c) => c.stop().catch(() => undefined)));
  }

  // ---- ConnectorHost ----

  async connectionChanged(
    instanceId: string,
    change: { state: ConnectionState; ownerJid?: string | null; profileName?: string | null; reason?: string | null; statusReason?: number },
  ): Promise<void> {
    const instance = this.deps.registry.byInstanceId(instanceId);
    if (!instance) return;
    const updated = await inUnit(this.deps.db, async (unit) => {
      const next = await this.deps.registry.updateConnection(unit, instance, {
        status: change.state,
        ownerJid: change.ownerJid,
        profileName: change.profileName,
        disconnectionReason: change.reason ?? null,
      });
      this.deps.events.emit(unit, this.source(next), 'CONNECTION_UPDATE', {
        instance: next.name,
        state: change.state,
        statusReason: change.statusReason ?? (change.state === 'open' ? 200 : change.state === 'connecting' ? 200 : 401),
        ...(change.state === 'open' ? { wuid: next.ownerJid, profileName: next.profileName, profilePictureUrl: next.profilePicUrl } : {}),
        ...(change.reason ? { reason: change.reason } : {}),
      });
      return next;
    });
    this.deps.logger.info({ instance: updated.name, state: change.state }, 'connection state changed');
    if (change.state === 'open') this.deps.workers.resume(instanceId);
    else await this.deps.workers.pause(instanceId);
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
      fromMe: message.fromMe,
      participant: message.participant ?? null,
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
    await inUnit(this.deps.db, async (unit) => {
      const stored = [];
      for (const message of messages) {
        const record = this.inboundRecord(instanceId, message);
        if (await this.insertOnce(unit, record)) stored.push(presentMessage(record));
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

  async loadMedia(blobId: string): Promise<Buffer | null> {
    const row = await this.deps.db.selectFrom('media_blobs').select('data').where('id', '=', blobId).executeTakeFirst();
    return row ? Buffer.from(row.data) : null;
  }

  readonly sessionKeys: SessionKeyStore = {
    get: async (instanceId, type, ids) => {
      if (ids.length === 0) return {};
      const rows = await this.deps.db
        .selectFrom('session_keys')
        .select(['id', 'value'])
        .where('instance_id', '=', instanceId)
        .where('type', '=', type)
        .where('id', 'in', ids)
        .execute();
      return Object.fromEntries(rows.map((r) => [r.id, r.value]));
    },
    set: async (instanceId, entries) => {
      if (entries.length === 0) return;
      const now = Date.now();
      await this.keyWrites.run(instanceId, () =>
        this.deps.db.transaction().execute(async (tx) => {
          for (const entry of entries) {
            if (entry.value === null) {
              await tx
                .deleteFrom('session_keys')
                .where('instance_id', '=', instanceId)
                .where('type', '=', entry.type)
                .where('id', '=', entry.id)
                .execute();
            } else {
              const value = entry.value;
              await tx
                .insertInto('session_keys')
                .values({ instance_id: instanceId, type: entry.type, id: entry.id, value, updated_at: now })
                .onConflict((oc) => oc.columns(['instance_id', 'type', 'id']).doUpdateSet({ value, updated_at: now }))
                .execute();
            }
          }
        }),
      );
    },
    clear: async (instanceId) => {
      // After the writes asked for before it: a write still in flight must not bring keys back after a logout.
      await this.keyWrites.run(instanceId, () => this.deps.db.deleteFrom('session_keys').where('instance_id', '=', instanceId).execute());
    },
  };

  async messageStatus(instanceId: string, keyId: string, status: MessageStatus, detail?: string): Promise<void> {
    const instance = this.deps.registry.byInstanceId(instanceId);
    if (!instance) return;
    await this.reports.status(instance, keyId, status, detail);
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
    await this.deps.workers.pause(instanceId);
    await inUnit(this.deps.db, async (unit) => {
      await unit.tx.deleteFrom('sessions').where('instance_id', '=', instanceId).execute();
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
    this.deps.logger.info({ instance: instance.name }, 'instance logged out');
  }

  async loadSession(instanceId: string): Promise<Record<string, unknown> | null> {
    const row = await this.deps.db.selectFrom('sessions').select('data').where('instance_id', '=', instanceId).executeTakeFirst();
    return row ? (JSON.parse(row.data) as Record<string, unknown>) : null;
  }

  async saveSession(instanceId: string, data: Record<string, unknown> | null): Promise<void> {
    const { db } = this.deps;
    if (data === null) {
      await db.deleteFrom('sessions').where('instance_id', '=', instanceId).execute();
      return;
    }
    const row = { instance_id: instanceId, data: JSON.stringify(data), updated_at: Date.now() };
    await db
      .insertInto('sessions')
      .values(row)
      .onConflict((oc) => oc.column('instance_id').doUpdateSet({ data: row.data, updated_at: row.updated_at }))
      .execute();
  }

  private source(instance: Instance) {
    return eventSourceOf(instance, (i) => this.deps.registry.apikeyOf(i));
  }
}
