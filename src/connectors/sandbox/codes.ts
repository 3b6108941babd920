// The link codes of unlinked sandbox instances, kept in the store so a scan can check them.
import type { Instance } from '../../core/instance.js';
import type { Db } from '../../platform/store/db.js';
import type { Unit } from '../../platform/store/unit.js';

export interface LinkCodeRow {
  code: string;
  instanceId: string;
  expiresAt: number;
}

export class LinkCodes {
  constructor(private readonly db: Db) {}

  /** Stores `code` as the only valid code of the instance. */
  async replace(instanceId: string, code: string, createdAt: number, expiresAt: number): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.deleteFrom('sandbox_codes').where('instance_id', '=', instanceId).execute();
      await tx.insertInto('sandbox_codes').values({ code, instance_id: instanceId, created_at: createdAt, expires_at: expiresAt }).execute();
    });
  }

  /** The code when it exists and has not expired at `now`. */
  async findValid(code: string, now: number): Promise<LinkCodeRow | null> {
    const row = await this.db
      .selectFrom('sandbox_codes')
      .select(['code', 'instance_id', 'expires_at'])
      .where('code', '=', code)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return row ? { code: row.code, instanceId: row.instance_id, expiresAt: Number(row.expires_at) } : null;
  }

  async remove(code: string): Promise<void> {
    await this.db.deleteFrom('sandbox_codes').where('code', '=', code).execute();
  }

  async removeAllOf(instanceId: string): Promise<void> {
    await this.db.deleteFrom('sandbox_codes').where('instance_id', '=', instanceId).execute();
  }
}

/** The codes of a deleted instance (a removal hook). */
export async function removeCodesOf(unit: Unit, instance: Instance): Promise<void> {
  await unit.tx.deleteFrom('sandbox_codes').where('instance_id', '=', instance.id).execute();
}
