// The registry of instances: rows in the store, mirrored in memory for by-name and by-key lookups on every request.
// Every change is signalled on `instances` (its instance id) at commit; each node of the store reads the row back.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../platform/store/db.js';
import type { InstancesTable } from '../platform/store/schema.js';
import type { Unit } from '../platform/store/unit.js';
import type { SecretsBox } from '../platform/util/secrets-box.js';
import type { StoreSignals } from '../platform/store/signals.js';
import { followChanges } from '../platform/store/batched-refresh.js';
import { LocalChanges } from '../platform/store/local-changes.js';
import { isPostgres } from '../platform/store/is-postgres.js';
import { notFound } from '../core/errors.js';
import { hashApiKey } from '../platform/util/api-keys.js';
import { mergeSettings, type ConnectionState, type Instance, type Integration, type PrivacySettings, type Settings } from '../core/instance.js';
import { mergePacing, type PacingChoice } from '../core/pacing.js';
import { allPacingColumns, changedPacingColumns, pacingFromRow } from './pacing-columns.js';

function fromRow(row: Selectable<InstancesTable>): Instance {
  return {
    id: row.id,
    name: row.name,
    integration: row.integration as Integration,
    status: row.status as ConnectionState,
    ownerJid: row.owner_jid,
    profileName: row.profile_name,
    profilePicUrl: row.profile_pic_url,
    profileStatus: row.profile_status,
    number: row.number,
    businessId: row.business_id,
    apikeyHash: row.apikey_hash,
    settings: {
      rejectCall: row.reject_call === 1,
      msgCall: row.msg_call,
      groupsIgnore: row.groups_ignore === 1,
      alwaysOnline: row.always_online === 1,
      readMessages: row.read_messages === 1,
      readStatus: row.read_status === 1,
      syncFullHistory: row.sync_full_history === 1,
    },
    privacy: row.privacy ? (JSON.parse(row.privacy) as PrivacySettings) : null,
    createdAt: row.created_at,
    pacing: pacingFromRow(row),
  };
}

/** Each setting's column (booleans are stored as 0 or 1). */
const settingColumn = {
  rejectCall: 'reject_call',
  msgCall: 'msg_call',
  groupsIgnore: 'groups_ignore',
  alwaysOnline: 'always_online',
  readMessages: 'read_messages',
  readStatus: 'read_status',
  syncFullHistory: 'sync_full_history',
} as const satisfies Record<keyof Settings, string>;

type SettingsColumns = { -readonly [K in keyof Settings as (typeof settingColumn)[K]]: Settings[K] extends boolean ? number : Settings[K] };

/** The columns of the settings given: all of them for whole settings; a change writes only what it changes. */
function settingsColumns(settings: Settings): SettingsColumns;
function settingsColumns(settings: Partial<Settings>): Partial<SettingsColumns>;
function settingsColumns(settings: Partial<Settings>): Partial<SettingsColumns> {
  const columns: Record<string, number | string> = {};
  for (const field of Object.keys(settingColumn) as (keyof Settings)[]) {
    const value = settings[field];
    if (value !== undefined) columns[settingColumn[field]] = typeof value === 'boolean' ? Number(value) : value;
  }
  return columns as Partial<SettingsColumns>;
}

export interface NewInstance {
  id: string;
  name: string;
  integration: Integration;
  apikey: string;
  number: string | null;
  businessId: string | null;
  providerToken: string | null;
  settings: Settings;
  /** The pacing fields chosen at creation (the others: the service's defaults). */
  pacing?: PacingChoice;
  /** The account it was linked to elsewhere (an instance taken over from Evolution): kept until it connects. */
  linkedAccount?: { ownerJid: string | null; profileName: string | null; profilePicUrl: string | null };
}

export interface ConnectionChange {
  status: ConnectionState;
  ownerJid?: string | null;
  profileName?: string | null;
  profilePicUrl?: string | null;
  profileStatus?: string | null;
  disconnectionReason?: string | null;
}

/** The instance with a connection change applied (fields the change leaves undefined keep their value). */
function withConnection(current: Instance, change: ConnectionChange): Instance {
  return {
    ...current,
    status: change.status,
    ownerJid: change.ownerJid !== undefined ? change.ownerJid : current.ownerJid,
    profileName: change.profileName !== undefined ? change.profileName : current.profileName,
    profilePicUrl: change.profilePicUrl !== undefined ? change.profilePicUrl : current.profilePicUrl,
    profileStatus: change.profileStatus !== undefined ? change.profileStatus : current.profileStatus,
  };
}

/** The signal channel of instance changes; the payload is the instance id. */
const changesChannel = 'instances';
/** Rows read back per statement. */
const idsPerRead = 500;
/** Sealed keys opened per turn of the event loop after a load (about 10 µs each). */
const keysOpenedPerTurn = 250;

/** Told of an instance as read back from the store after a change anywhere (undefined: it is gone). */
export type InstanceChangeListener = (id: string, instance: Instance | undefined) => void;

export class InstanceRegistry {
  private readonly byName = new Map<string, Instance>();
  private readonly byId = new Map<string, Instance>();
  private readonly byKeyHash = new Map<string, Instance>();
  private readonly byOwner = new Map<string, Instance>();
  /**
   * Instance keys, for answers to callers entitled to them and opted-in event envelopes: sealed as stored, or open
   * (opened a few at a time after a load, or at first use if that comes first).
   */
  private readonly keys = new Map<string, { sealed: string; open?: string }>();
  /** Changes committed by this node, counted per instance: a read-back that raced one of them is not applied. */
  private readonly localChanges = new LocalChanges();
  private readonly changeListeners: InstanceChangeListener[] = [];

  constructor(
    private readonly db: Db,
    private readonly box: SecretsBox,
    private readonly signals: Pick<StoreSignals, 'sendIn' | 'sendEachIn'>,
  ) {}

  /**
   * Reads every instance (at start, and after signals may have been missed). An instance changed, created or deleted
   * here while they were read keeps what this node knows of it: answered, to be read again.
   */
  async load(): Promise<string[]> {
    const mark = this.localChanges.markAll();
    const rows = await this.db.selectFrom('instances').selectAll().execute();
    const again: string[] = [];
    const read = new Set<string>();
    const applied: string[] = [];
    for (const row of rows) {
      read.add(row.id);
      if (this.localChanges.racedSinceAll(row.id, mark)) {
        again.push(row.id);
        continue;
      }
      const current = this.byId.get(row.id);
      if (current) this.unindex(current);
      this.rememberRow(row);
      applied.push(row.id);
    }
    const gone: string[] = [];
    for (const [id, instance] of [...this.byId]) {
      if (read.has(id)) continue;
      if (this.localChanges.racedSinceAll(id, mark)) {
        again.push(id);
        continue;
      }
      this.keys.delete(id);
      this.unindex(instance);
      gone.push(id);
    }
    // One key opened now fails the load when they were sealed with another key; the others are opened a few at a time
    // between the node's other work (a node's first listing of 10,000 instances would otherwise wait for all of them).
    const first = this.byId.values().next().value;
    if (first) this.apikeyOf(first);
    this.openKeysSoon();
    for (const id of gone) this.told(id, undefined);
    for (const id of applied) this.told(id, this.byId.get(id));
    return again;
  }

  /**
   * Follows changes made on the other nodes of the store: each changed instance is read back (ids told within a few
   * milliseconds together), everything after signals may have been missed. This node's own changes are applied here as
   * they commit (every write above patches what it changed), so its own signals are not read back. Answers how to stop.
   */
  follow(signals: StoreSignals, onError: (error: unknown) => void): () => void {
    return followChanges(signals, changesChannel, {
      read: (ids) => (ids === 'all' ? this.load() : this.refreshMany(ids)),
      onError,
      skipOwn: true,
    });
  }

  /** Told of every instance read back from the store after a change (made by any node), and after a full reload. */
  onChange(listener: InstanceChangeListener): void {
    this.changeListeners.push(listener);
  }

  all(): Instance[] {
    return [...this.byId.values()].sort((a, b) => a.createdAt - b.createdAt);
  }

  byInstanceName(name: string): Instance | undefined {
    return this.byName.get(name);
  }

  byInstanceId(id: string): Instance | undefined {
    return this.byId.get(id);
  }

  /** The instance whose linked account has this address (as last linked: check its status). */
  byOwnerJid(jid: string): Instance | undefined {
    return this.byOwner.get(jid);
  }

  byApiKey(key: string): Instance | undefined {
    return this.byKeyHash.get(hashApiKey(key));
  }

  /** By the hex SHA-256 of the key (when the caller has hashed it already). */
  byKeyDigest(hexDigest: string): Instance | undefined {
    return this.byKeyHash.get(hexDigest);
  }

  isKeyInUse(key: string): boolean {
    return this.byKeyHash.has(hashApiKey(key));
  }

  /** The instance's API key, for responses to callers entitled to it. */
  apikeyOf(instance: Instance): string {
    const key = this.keys.get(instance.id);
    if (key === undefined) return '';
    key.open ??= this.box.open(key.sealed);
    return key.open;
  }

  /** Opens the keys still sealed, `keysOpenedPerTurn` per turn of the event loop (one that fails stays sealed: see apikeyOf). */
  private openKeysSoon(): void {
    const sealed = [...this.keys.values()].filter((key) => key.open === undefined);
    let next = 0;
    const openSome = () => {
      for (const end = Math.min(next + keysOpenedPerTurn, sealed.length); next < end; next++) {
        const key = sealed[next];
        try {
          key.open ??= this.box.open(key.sealed);
        } catch {
          // Left sealed: the answer that needs it fails as it did before keys were opened ahead.
        }
      }
      if (next < sealed.length) setImmediate(openSome);
    };
    if (sealed.length > 0) setImmediate(openSome);
  }

  async providerTokenOf(instance: Instance): Promise<string | null> {
    const row = await this.db.selectFrom('instances').select('provider_token_sealed').where('id', '=', instance.id).executeTakeFirst();
    return row?.provider_token_sealed ? this.box.open(row.provider_token_sealed) : null;
  }

  async insert(unit: Unit, input: NewInstance): Promise<Instance> {
    const now = Date.now();
    const row: Selectable<InstancesTable> = {
      id: input.id,
      name: input.name,
      integration: input.integration,
      status: 'close',
      owner_jid: input.linkedAccount?.ownerJid ?? null,
      profile_name: input.linkedAccount?.profileName ?? null,
      profile_pic_url: input.linkedAccount?.profilePicUrl ?? null,
      profile_status: null,
      number: input.number,
      business_id: input.businessId,
      apikey_hash: hashApiKey(input.apikey),
      apikey_sealed: this.box.seal(input.apikey),
      provider_token_sealed: input.providerToken ? this.box.seal(input.providerToken) : null,
      ...settingsColumns(input.settings),
      privacy: null,
      disconnection_reason: null,
      disconnected_at: null,
      created_at: now,
      updated_at: now,
      ...allPacingColumns(input.pacing),
    };
    await unit.tx.insertInto('instances').values(row).execute();
    await this.signal(unit, input.id);
    const instance = fromRow(row);
    // Visible at once to this node's unit (events of the creation); undone if the unit rolls back.
    this.localChanges.madeIn(unit, instance.id);
    this.remember(instance);
    this.keys.set(instance.id, { sealed: row.apikey_sealed, open: input.apikey });
    unit.onRollback(() => this.forget(instance));
    return instance;
  }

  /** Changes the settings (and pacing fields) given; the others keep their stored value, whatever changed them meanwhile. */
  async updateSettings(unit: Unit, instance: Instance, changes: Partial<Settings>, pacing?: PacingChoice): Promise<Instance> {
    await unit.tx
      .updateTable('instances')
      .set({ ...settingsColumns(changes), ...changedPacingColumns(pacing), updated_at: Date.now() })
      .where('id', '=', instance.id)
      .execute();
    await this.signal(unit, instance.id);
    return this.patchAfterCommit(unit, instance, (current) => ({
      ...current,
      settings: mergeSettings(current.settings, changes),
      ...(pacing ? { pacing: mergePacing(current.pacing, pacing) } : {}),
    }));
  }

  async updateNumber(unit: Unit, instance: Instance, number: string): Promise<Instance> {
    await unit.tx.updateTable('instances').set({ number, updated_at: Date.now() }).where('id', '=', instance.id).execute();
    await this.signal(unit, instance.id);
    return this.patchAfterCommit(unit, instance, (current) => ({ ...current, number }));
  }

  async updatePrivacy(unit: Unit, instance: Instance, privacy: PrivacySettings): Promise<Instance> {
    await unit.tx
      .updateTable('instances')
      .set({ privacy: JSON.stringify(privacy), updated_at: Date.now() })
      .where('id', '=', instance.id)
      .execute();
    await this.signal(unit, instance.id);
    return this.patchAfterCommit(unit, instance, (current) => ({ ...current, privacy }));
  }

  /** The own profile's name or "about" changed (through the API, while linked). */
  async updateProfile(
    unit: Unit,
    instance: Instance,
    change: { profileName?: string; profileStatus?: string; profilePicUrl?: string | null },
  ): Promise<Instance> {
    await unit.tx
      .updateTable('instances')
      .set({
        ...(change.profileName !== undefined ? { profile_name: change.profileName } : {}),
        ...(change.profileStatus !== undefined ? { profile_status: change.profileStatus } : {}),
        ...(change.profilePicUrl !== undefined ? { profile_pic_url: change.profilePicUrl } : {}),
        updated_at: Date.now(),
      })
      .where('id', '=', instance.id)
      .execute();
    await this.signal(unit, instance.id);
    return this.patchAfterCommit(unit, instance, (current) => ({ ...current, ...change }));
  }

  async updateConnection(unit: Unit, instance: Instance, change: ConnectionChange): Promise<Instance> {
    await unit.tx
      .updateTable('instances')
      .set({
        status: change.status,
        ...(change.ownerJid !== undefined ? { owner_jid: change.ownerJid } : {}),
        ...(change.profileName !== undefined ? { profile_name: change.profileName } : {}),
        ...(change.profilePicUrl !== undefined ? { profile_pic_url: change.profilePicUrl } : {}),
        ...(change.profileStatus !== undefined ? { profile_status: change.profileStatus } : {}),
        ...(change.status === 'close' ? { disconnection_reason: change.disconnectionReason ?? null, disconnected_at: Date.now() } : {}),
        updated_at: Date.now(),
      })
      .where('id', '=', instance.id)
      .execute();
    await this.signal(unit, instance.id);
    return this.patchAfterCommit(unit, instance, (current) => withConnection(current, change));
  }

  /**
   * The connection changes of many instances in one unit, in order (many instances opening at once). On PostgreSQL,
   * changes of distinct instances that touch no profile picture or status are one statement and one signal statement,
   * and rows they would leave as they are are not written.
   */
  async updateConnections(unit: Unit, changes: readonly { instance: Instance; change: ConnectionChange }[]): Promise<Instance[]> {
    const ids = changes.map(({ instance }) => instance.id);
    const bulk =
      changes.length > 1 &&
      isPostgres(unit.tx) &&
      new Set(ids).size === ids.length &&
      changes.every(({ change }) => change.profilePicUrl === undefined && change.profileStatus === undefined);
    if (!bulk) {
      const updated: Instance[] = [];
      for (const { instance, change } of changes) updated.push(await this.updateConnection(unit, instance, change));
      return updated;
    }
    const rows = changes.map(({ instance, change }) => ({
      id: instance.id,
      status: change.status,
      owner_set: change.ownerJid !== undefined,
      owner_jid: change.ownerJid ?? null,
      profile_set: change.profileName !== undefined,
      profile_name: change.profileName ?? null,
      reason: change.disconnectionReason ?? null,
    }));
    const now = Date.now();
    // A row the change leaves as it is (a restart finds most instances as they were) is not written, nor signalled.
    const { rows: written } = await sql<{ id: string }>`
      update instances as i set
        status = v.status,
        owner_jid = case when v.owner_set then v.owner_jid else i.owner_jid end,
        profile_name = case when v.profile_set then v.profile_name else i.profile_name end,
        disconnection_reason = case when v.status = 'close' then v.reason else i.disconnection_reason end,
        disconnected_at = case when v.status = 'close' then ${now}::bigint else i.disconnected_at end,
        updated_at = ${now}::bigint
      from json_to_recordset(${JSON.stringify(rows)}::json)
        as v(id text, status text, owner_set boolean, owner_jid text, profile_set boolean, profile_name text, reason text)
      where i.id = v.id
        and (v.status = 'close' or i.status is distinct from v.status
          or (v.owner_set and i.owner_jid is distinct from v.owner_jid)
          or (v.profile_set and i.profile_name is distinct from v.profile_name))
      returning i.id`.execute(unit.tx);
    await this.signals.sendEachIn(
      unit,
      changesChannel,
      written.map((row) => row.id),
    );
    return changes.map(({ instance, change }) => this.patchAfterCommit(unit, instance, (current) => withConnection(current, change)));
  }

  /**
   * Locks the instance's row for the rest of the unit, or throws a 404 when it is gone: a change racing a delete (on
   * this node or another) waits for it and then finds nothing (PostgreSQL row lock; SQLite has one writer).
   */
  async claim(unit: Unit, instance: Instance): Promise<void> {
    const claimed = await unit.tx.updateTable('instances').set({ updated_at: Date.now() }).where('id', '=', instance.id).executeTakeFirst();
    if (Number(claimed.numUpdatedRows) === 0) throw notFound(`The "${instance.name}" instance does not exist`);
  }

  /** Removes the instance's row (what features keep of it goes by their removal hooks, run before). */
  async remove(unit: Unit, instance: Instance): Promise<void> {
    await unit.tx.deleteFrom('instances').where('id', '=', instance.id).execute();
    await this.signal(unit, instance.id);
    unit.afterCommit(() => this.forget(instance));
  }

  /** Reads these instances from the store (created on another node, say, and not known here yet), a few queries in all. */
  async readBack(ids: readonly string[]): Promise<void> {
    // A read that raced a change made here is not applied: that change's own signal reads it again.
    await this.refreshMany([...ids]);
  }

  /**
   * Re-reads these instances from the store: changed ones are indexed anew (a new name, key or owner), gone ones
   * forgotten. Answers those whose read raced a change committed here (newer than what was read): read them again.
   */
  private async refreshMany(ids: string[]): Promise<string[]> {
    const again: string[] = [];
    for (let start = 0; start < ids.length; start += idsPerRead) {
      const chunk = ids.slice(start, start + idsPerRead);
      const mark = this.localChanges.mark(chunk);
      const rows = await this.db.selectFrom('instances').selectAll().where('id', 'in', chunk).execute();
      const found = new Map(rows.map((row) => [row.id, row]));
      for (const [index, id] of chunk.entries()) {
        if (this.localChanges.raced(id, mark, index)) {
          again.push(id);
          continue;
        }
        const current = this.byId.get(id);
        if (current) this.unindex(current);
        const row = found.get(id);
        if (row) this.rememberRow(row);
        else this.keys.delete(id);
        this.told(id, this.byId.get(id));
      }
    }
    return again;
  }

  /** Tells every node of the store, when the unit commits, that the instance's row changed. */
  private async signal(unit: Unit, id: string): Promise<void> {
    await this.signals.sendIn(unit, changesChannel, id);
  }

  private told(id: string, instance: Instance | undefined): void {
    for (const listener of this.changeListeners) listener(id, instance);
  }

  private rememberRow(row: Selectable<InstancesTable>): void {
    this.remember(fromRow(row));
    // A key read again unchanged stays open.
    if (this.keys.get(row.id)?.sealed !== row.apikey_sealed) this.keys.set(row.id, { sealed: row.apikey_sealed });
  }

  /**
   * Applies `patch` to the instance as this node knows it when the unit commits, not to the copy the caller read
   * (another change may have committed meanwhile: a link, a settings change). Answers the patch of the instance as
   * known now.
   */
  private patchAfterCommit(unit: Unit, instance: Instance, patch: (current: Instance) => Instance): Instance {
    unit.afterCommit(() => {
      const current = this.byId.get(instance.id);
      if (!current) return; // Deleted meanwhile.
      this.localChanges.made(instance.id);
      this.unindex(current);
      this.remember(patch(current));
    });
    return patch(this.byId.get(instance.id) ?? instance);
  }

  private remember(instance: Instance): void {
    this.byName.set(instance.name, instance);
    this.byId.set(instance.id, instance);
    this.byKeyHash.set(instance.apikeyHash, instance);
    if (instance.ownerJid) this.byOwner.set(instance.ownerJid, instance);
  }

  private forget(instance: Instance): void {
    this.keys.delete(instance.id);
    this.localChanges.forget(instance.id);
    this.unindex(instance);
  }

  /** Takes the instance out of the indexes (an entry another instance holds now, after a read-back, stays). */
  private unindex(instance: Instance): void {
    if (this.byName.get(instance.name)?.id === instance.id) this.byName.delete(instance.name);
    this.byId.delete(instance.id);
    if (this.byKeyHash.get(instance.apikeyHash)?.id === instance.id) this.byKeyHash.delete(instance.apikeyHash);
    if (instance.ownerJid && this.byOwner.get(instance.ownerJid)?.id === instance.id) this.byOwner.delete(instance.ownerJid);
  }
}
