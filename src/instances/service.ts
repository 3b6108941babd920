// Instance use cases behind the API: create, find, connect, restart, log out, delete, settings, privacy, destinations.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../platform/logger.js';
import type { Db } from '../platform/store/db.js';
import { inUnit } from '../platform/store/unit.js';
import type { EventWriter } from '../events/writer.js';
import type { SinkConfigs } from '../events/sink-configs.js';
import { invalidInput, forbidden, notFound, unavailable } from '../core/errors.js';
import type { ConnectorKind, ConnectorKinds } from '../core/connector-kind.js';
import type { ConnectionState } from '../core/instance.js';
import type { ConnectionProblem, Connector, QrState } from '../core/connector.js';
import type { SinkConfig, SinkKind } from '../core/event-sink.js';
import { generateApiKey } from '../platform/util/api-keys.js';
import type { InstanceRegistry } from './registry.js';
import type { InstanceLifecycle } from './lifecycle.js';
import type { InstanceRemoval } from './removal.js';
import { eventSourceOf } from '../core/event-envelope.js';
import type { Instance, Integration, PrivacySettings, Settings } from '../core/instance.js';
import type { ProxyInput, ProxySettings } from '../core/proxy.js';
import type { ProxyStore } from './proxies.js';
import type { ProxyService } from './proxy-service.js';
import { effectivePacing, mergePacing, pacingProblem, type Pacing, type PacingChoice } from '../core/pacing.js';

export interface CreateInstanceInput {
  name: string;
  integration: Integration;
  token?: string;
  number?: string;
  businessId?: string;
  /** Connect at creation and answer the QR code. */
  qrcode?: boolean;
  settings: Settings;
  /** The pacing fields chosen (the others: the service's defaults). */
  pacing?: PacingChoice;
  sinks: { kind: SinkKind; config: SinkConfig }[];
  /** The proxy fields of the request (`proxyHost`, `proxyPort`…), checked and probed before anything is created. */
  proxy?: ProxyInput;
}

/** A connection as connect and restart answer it: open, or the QR code while linking. */
export type ConnectionAnswer = { state: 'open' } | { state: Exclude<ConnectionState, 'open'>; qr: QrState | null };

/** The live state of an instance's connection, as connectionState, fetchInstances and connect all tell it. */
export interface LiveConnection {
  state: ConnectionState;
  /** When the connection last heard from the messenger, where known. */
  lastActivityAt: number | null;
  /** Why it is not open, while that holds. */
  problem: ConnectionProblem | null;
}

const minClientKeyLength = 16;

export class InstanceService {
  /** Deletes in progress, by instance id. */
  private readonly removals = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: {
      db: Db;
      logger: Logger;
      registry: InstanceRegistry;
      kinds: ConnectorKinds;
      lifecycle: InstanceLifecycle;
      /** What every feature keeps of an instance, deleted with it. */
      removal: InstanceRemoval;
      events: EventWriter;
      sinks: SinkConfigs;
      /** The global API key: an instance key must never be it. */
      globalApiKey: string;
      /** The pacing of instances that set none of their own (PACING_* variables). */
      pacingDefaults: Pacing;
      /** Checks a create's proxy fields; the store keeps the proxy with the instance. */
      proxies?: { check: Pick<ProxyService, 'forCreate'>; store: Pick<ProxyStore, 'set'> };
    },
  ) {}

  /**
   * Creates an instance with its destinations, then links it (a kind that links at creation) or connects it (an
   * always-on kind, or when the QR code is asked for). Answers the QR code when asked.
   */
  async create(input: CreateInstanceInput): Promise<{ instance: Instance; apikey: string; qrcode?: QrState | null; problem?: ConnectionProblem }> {
    const kind = this.kindOf(input.integration);
    if (input.pacing) this.checkPacing(input.pacing);
    // A number that cannot be linked is refused before the instance exists (a 400 leaves nothing behind).
    kind.linkAtCreation?.check(input);
    const proxy = input.proxy && this.deps.proxies ? await this.deps.proxies.check.forCreate(input.proxy) : null;
    const { instance, apikey } = await this.insert(input, kind, proxy);
    let qrcode: QrState | null | undefined;
    let problem: ConnectionProblem | null = null;
    if (kind.linkAtCreation) {
      try {
        await kind.linkAtCreation.link(instance, input);
      } catch (error) {
        // Another instance took the number meanwhile: the refused create leaves no instance behind.
        await this.remove(instance);
        throw error;
      }
    } else if (kind.alwaysOn || input.qrcode) {
      const connector = await this.deps.lifecycle.connect(instance);
      if (input.qrcode) {
        qrcode = connector.qr();
        problem = connector.state() === 'open' ? null : (connector.problem?.() ?? null);
      }
    }
    this.deps.logger.info({ instance: instance.name, integration: kind.name }, 'instance created');
    return { instance, apikey, ...(qrcode !== undefined ? { qrcode } : {}), ...(problem && !qrcode ? { problem } : {}) };
  }

  private async insert(input: CreateInstanceInput, kind: ConnectorKind, proxy: ProxySettings | null): Promise<{ instance: Instance; apikey: string }> {
    const { registry } = this.deps;
    if (registry.byInstanceName(input.name)) throw forbidden(`This name "${input.name}" is already in use.`);
    const fields = kind.creationFields(input);
    let apikey = generateApiKey();
    if (input.token && fields.tokenIsApiKey) {
      if (input.token.length < minClientKeyLength) {
        throw invalidInput(`token must be at least ${minClientKeyLength} characters (it becomes the instance API key); omit it to get a generated key`);
      }
      // A key travels in the apikey header: visible ASCII only (header values lose outer spaces, carry no line breaks
      // and are read as Latin-1), so a key that could never be sent is refused now rather than answered 401 forever.
      if (!/^[\x21-\x7e]+$/.test(input.token)) {
        throw invalidInput('token may hold only visible ASCII characters (no spaces, line breaks or accented letters): it is sent in the apikey header');
      }
      if (input.token === this.deps.globalApiKey) {
        throw invalidInput('token must not be the global API key: an instance key is meant to be handed out; choose another or omit it');
      }
      if (registry.isKeyInUse(input.token)) throw invalidInput('token is already the key of another instance; choose another or omit it');
      apikey = input.token;
    }
    const id = randomUUID();
    let instance: Instance | undefined;
    try {
      instance = await inUnit(this.deps.db, async (unit) => {
        const created = await registry.insert(unit, {
          id,
          name: input.name,
          integration: kind.name,
          apikey,
          number: fields.number,
          businessId: input.businessId ?? null,
          providerToken: fields.providerToken,
          settings: input.settings,
          pacing: input.pacing,
        });
        // Owned by this node from the start, so it connects here at once.
        await this.deps.lifecycle.ownCreated(unit, id);
        for (const sink of input.sinks) await this.deps.sinks.set(unit, id, sink.kind, sink.config);
        if (proxy) await this.deps.proxies?.store.set(unit, id, proxy);
        this.deps.events.emit(
          unit,
          eventSourceOf(created, () => apikey),
          'INSTANCE_CREATE',
          {
            instanceName: created.name,
            instanceId: created.id,
          },
        );
        return created;
      });
    } catch (error) {
      // Two creates at once: the store's unique columns decide which one lost, and on what.
      if (isUniqueViolation(error) && violatedColumn(error) === 'apikey_hash') {
        throw invalidInput('token is already the key of another instance; choose another or omit it');
      }
      if (isUniqueViolation(error)) throw forbidden(`This name "${input.name}" is already in use.`);
      throw error;
    }
    this.deps.lifecycle.attach(instance);
    return { instance, apikey };
  }

  /**
   * The instances a caller asks for: all, or those of a name and/or id (none found is a 404). An instance key sees
   * only its own instance (asking for another is a 403).
   */
  find(query: { instanceName?: string; instanceId?: string }, own?: Instance): Instance[] {
    const { registry } = this.deps;
    const { instanceName, instanceId } = query;
    if (own) {
      const current = registry.byInstanceId(own.id) ?? own;
      if ((instanceName && instanceName !== current.name) || (instanceId && instanceId !== current.id)) {
        throw forbidden(`the API key does not grant access to instance "${instanceName ?? instanceId}"`);
      }
      return [current];
    }
    let list = registry.all();
    if (instanceName) list = list.filter((i) => i.name === instanceName);
    if (instanceId) list = list.filter((i) => i.id === instanceId);
    if ((instanceName || instanceId) && list.length === 0) {
      const both = instanceName && instanceId && registry.byInstanceName(instanceName);
      throw notFound(both ? `Instance "${instanceName}" does not have the id "${instanceId}"` : `Instance "${instanceName ?? instanceId}" not found`);
    }
    return list;
  }

  /**
   * Connects (or answers the QR code of the linking under way). A number asks for a pairing code (WhatsApp Web) instead
   * of scanning the QR code; kinds that take none keep their stored number (WHATSAPP-BUSINESS: the phone-number id;
   * EVOLUTION: the routing id), whatever the request says.
   *
   * When the messenger cannot be reached (or a pairing code asked for cannot be had) the answer is a 503 saying why,
   * never an empty QR code.
   */
  async connect(instance: Instance, number?: string): Promise<ConnectionAnswer> {
    const kind = this.kindOf(instance.integration);
    let current = instance;
    const pairing = Boolean(kind.pairingNumber && number);
    if (kind.pairingNumber && number && number !== instance.number) {
      const digits = kind.pairingNumber(number);
      current = await inUnit(this.deps.db, (unit) => this.deps.registry.updateNumber(unit, instance, digits));
    }
    let connector = await this.deps.lifecycle.connect(current);
    // A QR code made without a pairing code (the socket was opened before the number was given): a pairing code needs a
    // socket opened for pairing, so the linking starts over.
    const shown = connector.qr();
    if (pairing && connector.state() === 'connecting' && shown && shown.pairingCode === null && !shown.pairingProblem) {
      connector = await this.deps.lifecycle.restart(current);
    }
    return answerOrProblem(instance, connector, pairing);
  }

  async restart(instance: Instance): Promise<ConnectionAnswer> {
    return answerOrProblem(instance, await this.deps.lifecycle.restart(instance), false);
  }

  /**
   * The live state, when the connection last heard from the messenger (truthful health), and why it is not open: the
   * connector's problem (WhatsApp Web cannot be reached…), or the reason it knows (an unreachable proxy…).
   */
  connectionState(instance: Instance): LiveConnection {
    const connector = this.deps.lifecycle.connectorOf(instance.id);
    const state = connector?.state() ?? this.unstarted(instance);
    const known = connector?.stateReason?.() ?? null;
    return {
      state,
      lastActivityAt: connector?.lastActivityAt?.() ?? null,
      problem: state === 'open' ? null : (connector?.problem?.() ?? (known ? { reason: known, statusCode: 503 } : null)),
    };
  }

  /**
   * The state of an instance without a connector here: one waiting for its turn to open (after this node started or
   * took it over) is `connecting`, one owned here and not started `close`; one live on another node as it last wrote.
   */
  private unstarted(instance: Instance): ConnectionState {
    if (this.deps.lifecycle.awaitsOpening(instance.id)) return 'connecting';
    return this.deps.lifecycle.ownsLocally(instance.id) ? 'close' : instance.status;
  }

  /** Unlinks the account; an instance not connected is refused. */
  async logout(instance: Instance): Promise<void> {
    const state = this.deps.lifecycle.connectorOf(instance.id)?.state() ?? 'close';
    if (state === 'close') throw invalidInput(`The "${instance.name}" instance is not connected`);
    await this.deps.lifecycle.logout(instance);
  }

  /**
   * Deletes the instance. Deletes of one instance at once: the first does it (its logout included), the others answer
   * 404 and emit nothing; across nodes the store decides (the row is claimed first).
   */
  async remove(instance: Instance): Promise<void> {
    const running = this.removals.get(instance.id);
    if (running) {
      await running.catch(() => undefined);
      // The first one failed: the instance is still there, so this request tries again.
      if (this.deps.registry.byInstanceId(instance.id)) return this.remove(instance);
      throw notFound(`The "${instance.name}" instance does not exist`);
    }
    const removal = this.removeNow(instance);
    this.removals.set(instance.id, removal);
    try {
      await removal;
    } finally {
      this.removals.delete(instance.id);
    }
  }

  private async removeNow(instance: Instance): Promise<void> {
    await this.deps.lifecycle.detach(instance);
    await inUnit(this.deps.db, async (unit) => {
      // Claimed first: a delete on another node waits for this one and then finds nothing, so the farewell events
      // are written once.
      await this.deps.registry.claim(unit, instance);
      const source = eventSourceOf(instance, (i) => this.deps.registry.apikeyOf(i));
      // The instance's own webhook gets these too, with its settings as they are now (they go with the instance).
      this.deps.events.emit(unit, source, 'INSTANCE_DELETE', { instanceName: instance.name, instanceId: instance.id }, { farewell: true });
      this.deps.events.emit(unit, source, 'REMOVE_INSTANCE', null, { farewell: true });
      await this.deps.events.keepPendingDeliveries(unit.tx, instance.id);
      await this.deps.removal.run(unit, instance);
      await this.deps.registry.remove(unit, instance);
      await this.deps.sinks.removed(unit, instance.id);
    });
  }

  /** Changes the settings (and pacing fields) given; the others keep their value. */
  async updateSettings(instance: Instance, changes: Partial<Settings>, pacing?: PacingChoice): Promise<Instance> {
    if (pacing) this.checkPacing(mergePacing((this.deps.registry.byInstanceId(instance.id) ?? instance).pacing, pacing));
    return inUnit(this.deps.db, (unit) => this.deps.registry.updateSettings(unit, instance, changes, pacing));
  }

  /** The pacing in effect for the instance: its own fields over the service's defaults. */
  pacingOf(instance: Instance): Pacing {
    return effectivePacing(this.deps.pacingDefaults, instance.pacing);
  }

  /** A pacing that would not hold together once in effect (min gap above max gap) is a 400. */
  private checkPacing(choice: PacingChoice): void {
    const problem = pacingProblem(effectivePacing(this.deps.pacingDefaults, choice));
    if (problem) throw invalidInput(problem);
  }

  async updatePrivacy(instance: Instance, privacy: PrivacySettings): Promise<Instance> {
    return inUnit(this.deps.db, (unit) => this.deps.registry.updatePrivacy(unit, instance, privacy));
  }

  async updateProfile(instance: Instance, change: { profileName?: string; profileStatus?: string; profilePicUrl?: string | null }): Promise<Instance> {
    return inUnit(this.deps.db, (unit) => this.deps.registry.updateProfile(unit, instance, change));
  }

  /** Sets an event destination; an instance deleted meanwhile (here or on another node) is a 404, nothing stored. */
  async setSink(instance: Instance, kind: SinkKind, config: SinkConfig): Promise<void> {
    await inUnit(this.deps.db, async (unit) => {
      await this.deps.registry.claim(unit, instance);
      await this.deps.sinks.set(unit, instance.id, kind, config);
    });
  }

  private kindOf(integration: Integration): ConnectorKind {
    const kind = this.deps.kinds.of(integration);
    if (!kind) throw invalidInput(`integration must be one of: ${this.deps.kinds.names.join(', ')}`);
    return kind;
  }
}

/**
 * What connect and restart answer: open, the QR code, or (no QR code to show because the messenger cannot be reached,
 * or a pairing code asked for cannot be had) a 503 with the reason and what happens next.
 */
function answerOrProblem(instance: Instance, connector: Connector, pairing: boolean): ConnectionAnswer {
  const state = connector.state();
  if (state === 'open') return { state };
  const qr = connector.qr();
  if (qr && pairing && qr.pairingCode === null && qr.pairingProblem) throw unavailable(qr.pairingProblem);
  if (qr) return { state, qr };
  const problem = connector.problem?.() ?? null;
  if (problem) throw unavailable(...problemMessages(instance, state, problem));
  return { state, qr };
}

/** A connection problem told to a person: the reason, then what the service does about it and what they can do. */
function problemMessages(instance: Instance, state: ConnectionState, problem: ConnectionProblem): string[] {
  if (state === 'close') {
    return [problem.reason, `the instance stopped trying; POST /messenger/instance/restart/${instance.name} tries again`];
  }
  const waitS = problem.retryAt === undefined ? 0 : Math.max(0, Math.ceil((problem.retryAt - Date.now()) / 1000));
  const next = waitS > 0 ? `tries again by itself in ${waitS} s` : 'is trying again now';
  return [
    problem.reason,
    `the instance ${next} (connectionState and the connection.update events say when it connects); POST /messenger/instance/restart/${instance.name} tries at once`,
  ];
}

/** The column a unique violation is about, where the driver says (PostgreSQL's constraint and detail, SQLite's message). */
function violatedColumn(error: unknown): string | undefined {
  const e = error as { constraint?: string; detail?: string; message?: string };
  const text = `${e?.constraint ?? ''} ${e?.detail ?? ''} ${e?.message ?? ''}`;
  return /apikey_hash/.test(text) ? 'apikey_hash' : undefined;
}

function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || /UNIQUE constraint failed/.test(e?.message ?? '');
}
