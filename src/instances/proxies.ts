// The proxy of each instance in the store: one row at most, its password sealed, read back masked or in effect.
import type { Selectable } from 'kysely';
import type { Db } from '../platform/store/db.js';
import type { InstanceProxiesTable } from '../platform/store/schema.js';
import type { Unit } from '../platform/store/unit.js';
import type { SecretsBox } from '../platform/util/secrets-box.js';
import type { ProxyProtocol, ProxySettings } from '../core/proxy.js';
import type { RemovalHook } from './removal.js';

/** A stored proxy as answers may show it: never its password, only whether there is one. */
export interface StoredProxy {
  instanceId: string;
  enabled: boolean;
  /** Empty for a disabled proxy (turning a proxy off forgets it, credentials included). */
  protocol: ProxyProtocol | '';
  host: string;
  port: number | null;
  username: string | null;
  hasPassword: boolean;
  createdAt: number;
  updatedAt: number;
}

function fromRow(row: Selectable<InstanceProxiesTable>): StoredProxy {
  return {
    instanceId: row.instance_id,
    enabled: row.enabled === 1,
    protocol: row.protocol as ProxyProtocol | '',
    host: row.host,
    port: row.enabled === 1 ? Number(row.port) : null,
    username: row.username,
    hasPassword: row.password_sealed !== null,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export class ProxyStore {
  constructor(
    private readonly db: Db,
    private readonly box: SecretsBox,
  ) {}

  async find(instanceId: string): Promise<StoredProxy | null> {
    const row = await this.db.selectFrom('instance_proxies').selectAll().where('instance_id', '=', instanceId).executeTakeFirst();
    return row ? fromRow(row) : null;
  }

  /** The proxy the instance's traffic goes through now, with its password (for building connections only); null: none. */
  async inEffect(instanceId: string): Promise<ProxySettings | null> {
    const row = await this.db.selectFrom('instance_proxies').selectAll().where('instance_id', '=', instanceId).where('enabled', '=', 1).executeTakeFirst();
    if (!row) return null;
    return {
      protocol: row.protocol as ProxyProtocol,
      host: row.host,
      port: Number(row.port),
      username: row.username,
      password: row.password_sealed ? this.box.open(row.password_sealed) : null,
    };
  }

  /** Stores the proxy (null: turned off, nothing of it kept); `keepPassword` keeps the stored password as it is. */
  async set(unit: Unit, instanceId: string, proxy: ProxySettings | null, keepPassword = false): Promise<void> {
    const now = Date.now();
    const current = await unit.tx.selectFrom('instance_proxies').select(['password_sealed']).where('instance_id', '=', instanceId).executeTakeFirst();
    const sealed = proxy === null ? null : keepPassword ? (current?.password_sealed ?? null) : proxy.password ? this.box.seal(proxy.password) : null;
    const columns = {
      enabled: proxy ? 1 : 0,
      protocol: proxy?.protocol ?? '',
      host: proxy?.host ?? '',
      port: proxy?.port ?? 0,
      username: proxy?.username ?? null,
      password_sealed: sealed,
      updated_at: now,
    };
    await unit.tx
      .insertInto('instance_proxies')
      .values({ instance_id: instanceId, ...columns, created_at: now })
      .onConflict((oc) => oc.column('instance_id').doUpdateSet(columns))
      .execute();
  }

  /** Whether a password is stored for the instance's proxy (a masked password in a request keeps it). */
  async hasPassword(instanceId: string): Promise<boolean> {
    return (await this.find(instanceId))?.hasPassword ?? false;
  }
}

/** The proxy goes with its instance. */
export const removeProxyOf: RemovalHook = async (unit, instance) => {
  await unit.tx.deleteFrom('instance_proxies').where('instance_id', '=', instance.id).execute();
};
