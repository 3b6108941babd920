// Instance operations behind the API: create, delete, settings, privacy and event-destination settings.
import { randomUUID } from 'node:crypto';
import type { Config } from '../platform/config.js';
import type { Db } from '../platform/store/db.js';
import { inUnit } from '../platform/store/unit.js';
import type { EventWriter } from '../events/writer.js';
import type { SinkConfig, SinkConfigs, SinkKind } from '../events/sink-configs.js';
import { invalidInput, forbidden, notFound } from '../core/errors.js';
import { generateApiKey } from '../platform/util/api-keys.js';
import type { InstanceRegistry } from './registry.js';
import type { InstanceRuntime } from './runtime.js';
import { eventSourceOf } from '../core/event-envelope.js';
import type { Instance, Integration, PrivacySettings, Settings } from '../core/instance.js';

export interface CreateInstanceInput {
  name: string;
  integration: Integration;
  token?: string;
  number?: string;
  businessId?: string;
  settings: Settings;
  sinks: { kind: SinkKind; config: SinkConfig }[];
}

const minClientKeyLength = 16;

export class InstanceService {
  /** Deletes in progress, by instance id. */
  private readonly removals = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: {
      db: Db;
      config: Config;
      registry: InstanceRegistry;
      runtime: InstanceRuntime;
      events: EventWriter;
      sinks: SinkConfigs;
      /** The global API key: an instance key must never be it. */
      globalApiKey: string;
    },
  ) {}

  async create(input: CreateInstanceInput): Promise<{ instance: Instance; apikey: string }> {
    const { registry } = this.deps;
    if (registry.byInstanceName(input.name)) throw forbidden(`This name "${input.name}" is already in use.`);
    const businessToken = input.integration === 'WHATSAPP-BUSINESS' ? input.token : undefined;
    if (input.integration === 'WHATSAPP-BUSINESS') {
      if (!input.token) throw invalidInput('token is required for WHATSAPP-BUSINESS (the Meta access token)');
      if (!input.number) throw invalidInput('number is required for WHATSAPP-BUSINESS (the phone-number id)');
      if (!/^\d+$/.test(input.number)) throw invalidInput('number must be the phone-number id Meta shows for the number (digits only) for WHATSAPP-BUSINESS');
    }
    // WhatsApp Web takes the number for a pairing code: the same rule as connect's, checked before anything is stored.
    const number = input.integration === 'WHATSAPP-BAILEYS' && input.number !== undefined ? pairingNumber(input.number) : input.number;
    let apikey = generateApiKey();
    if (input.token && input.integration !== 'WHATSAPP-BUSINESS') {
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
          integration: input.integration,
          apikey,
          number: number ?? null,
          businessId: input.businessId ?? null,
          providerToken: businessToken ?? null,
          settings: input.settings,
        });
        for (const sink of input.sinks) await this.deps.sinks.set(unit, id, sink.kind, sink.config);
        this.deps.events.emit(unit, eventSourceOf(created, () => apikey), 'INSTANCE_CREATE', {
          instanceName: created.name,
          instanceId: created.id,
        });
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
    this.deps.runtime.attach(instance);
    return { instance, apikey };
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
    await this.deps.runtime.detach(instance);
    await inUnit(this.deps.db, async (unit) => {
      // Claimed first: a delete on another node waits for this one and then finds nothing, so the farewell events
      // are written once.
      await this.deps.registry.claim(unit, instance);
      const source = eventSourceOf(instance, (i) => this.deps.registry.apikeyOf(i));
      // The instance's own webhook gets these too, with its settings as they are now (they go with the instance).
      this.deps.events.emit(unit, source, 'INSTANCE_DELETE', { instanceName: instance.name, instanceId: instance.id }, { farewell: true });
      this.deps.events.emit(unit, source, 'REMOVE_INSTANCE', null, { farewell: true });
      await this.deps.events.keepPendingDeliveries(unit.tx, instance.id);
      await this.deps.registry.remove(unit, instance);
      unit.afterCommit(() => this.deps.sinks.forget(instance.id));
    });
  }

  /** Changes the settings given; the others keep their value. */
  async updateSettings(instance: Instance, changes: Partial<Settings>): Promise<Instance> {
    return inUnit(this.deps.db, (unit) => this.deps.registry.updateSettings(unit, instance, changes));
  }

  /** The phone number used for a pairing code (WhatsApp Web) on the next connection. */
  async updateNumber(instance: Instance, number: string): Promise<Instance> {
    const digits = pairingNumber(number);
    if (!digits) throw invalidInput(pairingNumberRule);
    return inUnit(this.deps.db, (unit) => this.deps.registry.updateNumber(unit, instance, digits));
  }

  async updatePrivacy(instance: Instance, privacy: PrivacySettings): Promise<Instance> {
    return inUnit(this.deps.db, (unit) => this.deps.registry.updatePrivacy(unit, instance, privacy));
  }

  /** Sets an event destination; an instance deleted meanwhile (here or on another node) is a 404, nothing stored. */
  async setSink(instance: Instance, kind: SinkKind, config: SinkConfig): Promise<void> {
    await inUnit(this.deps.db, async (unit) => {
      await this.deps.registry.claim(unit, instance);
      await this.deps.sinks.set(unit, instance.id, kind, config);
    });
  }
}

/** The column a unique violation is about, where the driver says (PostgreSQL's constraint and detail, SQLite's message). */
function violatedColumn(error: unknown): string | undefined {
  const e = error as { constraint?: string; detail?: string; message?: string };
  const text = `${e?.constraint ?? ''} ${e?.detail ?? ''} ${e?.message ?? ''}`;
  return /apikey_hash/.test(text) ? 'apikey_hash' : undefined;
}

/**
 * The digits of a number for a WhatsApp Web pairing code (spaces, `+`, dashes and parentheses dropped); an empty
 * one means none (clients send `""` for fields they leave out).
 */
const pairingNumberRule = 'number must be a phone number with country code, 5 to 15 digits';

function pairingNumber(number: string): string | undefined {
  const digits = number.replace(/[\s+()-]/g, '');
  if (digits === '') return undefined;
  if (!/^\d{5,15}$/.test(digits)) throw invalidInput(pairingNumberRule);
  return digits;
}

function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || /UNIQUE constraint failed/.test(e?.message ?? '');
}
