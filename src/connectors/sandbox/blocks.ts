// Who each sandbox instance blocked: kept in the store, read into memory once (again when another node changed it).
import type { Instance } from '../../core/instance.js';
import { sharedCache, type FleetSignals } from './shared-cache.js';
import type { Db } from '../../platform/store/db.js';
import type { Unit } from '../../platform/store/unit.js';

export class SandboxBlocks {
  /** Blocked addresses by blocker instance id; null until read from the store. */
  private byInstance: Map<string, Set<string>> | null = null;
  private loading: Promise<Map<string, Set<string>>> | null = null;
  /** Raised when another node changed the blocks: a read begun before that is not kept. */
  private generation = 0;

  private readonly changed: () => Promise<void>;

  constructor(
    private readonly db: Db,
    fleet?: FleetSignals,
  ) {
    this.changed = sharedCache(fleet, 'sandbox-blocks', () => {
      this.generation++;
      this.byInstance = null;
      this.loading = null;
    });
  }

  /** Whether `blockerId` blocked any of `forms` (the spellings of one account). */
  async blocked(blockerId: string, forms: readonly string[]): Promise<boolean> {
    const blocks = (this.byInstance ?? (await this.load())).get(blockerId);
    return blocks !== undefined && forms.some((form) => blocks.has(form));
  }

  async block(blockerId: string, jid: string): Promise<void> {
    const blocks = this.byInstance ?? (await this.load());
    await this.db
      .insertInto('sandbox_blocks')
      .values({ instance_id: blockerId, jid, created_at: Date.now() })
      .onConflict((oc) => oc.columns(['instance_id', 'jid']).doNothing())
      .execute();
    const own = blocks.get(blockerId) ?? new Set<string>();
    own.add(jid);
    blocks.set(blockerId, own);
    await this.changed();
  }

  /** Unblocks every spelling of the account in `forms`. */
  async unblock(blockerId: string, forms: readonly string[]): Promise<void> {
    const blocks = this.byInstance ?? (await this.load());
    await this.db
      .deleteFrom('sandbox_blocks')
      .where('instance_id', '=', blockerId)
      .where('jid', 'in', [...forms])
      .execute();
    for (const form of forms) blocks.get(blockerId)?.delete(form);
    await this.changed();
  }

  private load(): Promise<Map<string, Set<string>>> {
    this.loading ??= (async () => {
      const generation = this.generation;
      const rows = await this.db.selectFrom('sandbox_blocks').select(['instance_id', 'jid']).execute();
      const map = new Map<string, Set<string>>();
      for (const row of rows) map.set(row.instance_id, (map.get(row.instance_id) ?? new Set<string>()).add(row.jid));
      if (generation === this.generation) this.byInstance = map;
      return map;
    })();
    return this.loading;
  }
}

/** The blocks of a deleted instance (a removal hook). */
export async function removeBlocksOf(unit: Unit, instance: Instance): Promise<void> {
  await unit.tx.deleteFrom('sandbox_blocks').where('instance_id', '=', instance.id).execute();
}
