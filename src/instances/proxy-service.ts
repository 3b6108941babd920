// Proxy use cases: set (checked, probed, stored sealed, applied to what goes through it), find, and a create's proxy.
import { invalidInput, notFound } from '../core/errors.js';
import type { Instance } from '../core/instance.js';
import { maskedPassword, parseProxy, proxyLabel, proxySetFields, type ProxyFieldNames, type ProxyInput, type ProxySettings } from '../core/proxy.js';
import type { Logger } from '../platform/logger.js';
import type { Db } from '../platform/store/db.js';
import { inUnit } from '../platform/store/unit.js';
import type { ProxyStore, StoredProxy } from './proxies.js';
import type { InstanceRegistry } from './registry.js';

/** Answers null when the proxy can be reached, else why not (platform/net/proxy-probe.ts). */
type ProxyProbe = (proxy: ProxySettings) => Promise<string | null>;

export interface ProxyServiceDeps {
  db: Db;
  logger: Logger;
  registry: Pick<InstanceRegistry, 'claim'>;
  store: ProxyStore;
  probe: ProxyProbe;
  /** Reconnects what goes through the instance's proxy (the lifecycle). */
  applied(instance: Instance): Promise<void>;
}

/** The names instance/create gives the proxy fields. */
const proxyCreateFields: ProxyFieldNames = {
  enabled: 'proxyEnabled',
  host: 'proxyHost',
  port: 'proxyPort',
  protocol: 'proxyProtocol',
  username: 'proxyUsername',
  password: 'proxyPassword',
};

export class ProxyService {
  constructor(private readonly deps: ProxyServiceDeps) {}

  find(instance: Instance): Promise<StoredProxy | null> {
    return this.deps.store.find(instance.id);
  }

  /**
   * Sets the instance's proxy (or turns it off with `enabled: false`). A proxy that cannot be reached is a 400 and
   * nothing changes; the password given is stored sealed, and `password` equal to the mask find answers keeps the stored
   * one. What goes through the proxy is reconnected (WhatsApp Web: a new socket through the new proxy).
   */
  async set(instance: Instance, input: ProxyInput): Promise<StoredProxy> {
    const parsed = parseProxy(input, proxySetFields);
    if (parsed?.keepPassword && !(await this.deps.store.hasPassword(instance.id))) {
      throw invalidInput(`password "${maskedPassword}" keeps the stored password, but none is stored: send the proxy's password`);
    }
    if (parsed) await this.assertReachable(parsed.settings, 'the proxy was not changed');
    await inUnit(this.deps.db, async (unit) => {
      await this.deps.registry.claim(unit, instance);
      await this.deps.store.set(unit, instance.id, parsed?.settings ?? null, parsed?.keepPassword);
    });
    this.deps.logger.info({ instance: instance.name, proxy: parsed ? proxyLabel(parsed.settings) : 'off' }, parsed ? 'proxy set' : 'proxy turned off');
    try {
      await this.deps.applied(instance);
    } catch (error) {
      // Stored all the same: the next connect goes through it; the connection's own state says what went wrong.
      this.deps.logger.error({ err: error, instance: instance.name }, 'reconnecting through the new proxy failed');
    }
    const stored = await this.deps.store.find(instance.id);
    if (!stored) throw notFound(`The "${instance.name}" instance does not exist`);
    return stored;
  }

  /**
   * The proxy of a create request (`proxyHost`, `proxyPort`…), checked and probed before anything is created; null when
   * the request gives none (every proxy field absent or empty).
   */
  async forCreate(input: ProxyInput): Promise<ProxySettings | null> {
    const given = Object.values(input).some((value) => value !== undefined && value !== null && value !== '');
    if (!given) return null;
    const parsed = parseProxy(input, proxyCreateFields);
    if (!parsed) return null;
    if (parsed.keepPassword) throw invalidInput(`${proxyCreateFields.password} must be the proxy's password (there is no stored one to keep)`);
    await this.assertReachable(parsed.settings, 'no instance was created');
    return parsed.settings;
  }

  private async assertReachable(proxy: ProxySettings, consequence: string): Promise<void> {
    const problem = await this.deps.probe(proxy);
    if (problem) throw invalidInput(`${problem}; ${consequence}`);
  }
}
