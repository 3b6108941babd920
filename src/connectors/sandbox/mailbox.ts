// The sandbox across the nodes of a fleet: which node has each sandbox instance live, and letters for those live elsewhere.
import type { Logger } from '../../platform/logger.js';
import type { Instance } from '../../core/instance.js';
import type { Db } from '../../platform/store/db.js';
import type { Unit } from '../../platform/store/unit.js';
import type { StoreSignals } from '../../platform/store/signals.js';
import { letterOf, type Letter } from './letters.js';
import type { LinkedParty } from './party.js';
import { TurnBatch } from '../../platform/util/turn-batch.js';

/** A row of `sandbox_live`: the instance is live on the node of this incarnation. */
interface LiveRow {
  instance_id: string;
  incarnation: string;
  owner_jid: string;
  profile_name: string;
  since: number;
}

export interface MailboxDeps {
  db: Db;
  signals: StoreSignals;
  /** This node's incarnation (written on the live rows of its instances). */
  incarnation: string;
  /** NODE_DEAD_AFTER_MS: a node silent longer has nothing live. */
  deadAfterMs: number;
  /** Whether other nodes may share the store (PostgreSQL); on a one-node store the mailbox does nothing. */
  fleet: boolean;
  /** Whether the instance's connector is live and linked on this node. */
  isLocal(instanceId: string): boolean;
  /** The instances whose connectors are live and linked on this node. */
  localIds(): string[];
  /** Hands a letter taken from the store to the instance live here (through this node's host). */
  deliver(instanceId: string, letter: Letter): Promise<void>;
  logger: Logger;
}

/** The signal telling the nodes that letters wait for an instance (payload: its id). */
const mailChannel = 'sandbox-mail';
const batchSize = 200;

/**
 * Each node writes a row for every sandbox instance live (open) on it and removes it when the connector closes; a row
 * counts while its node is alive. What the network hands an instance live on another node becomes a letter in the
 * store and a signal; the node that has the instance live takes its letters (deleted as taken, so exactly one node
 * hands each over) in the order they were written, and at every connector's opening and after a resync.
 */
export class SandboxMailbox {
  /** Live-row writes per instance, one after the other (a withdrawal never overtakes the next announcement). */
  private readonly rowWrites = new Map<string, Promise<void>>();
  private readonly drains = new Map<string, { again: boolean; done: Promise<void> }>();
  /**
   * Live rows announced in one turn (many instances opening at once) are written with one statement, and one query
   * answers which of them have letters waiting.
   */
  private readonly announcements = new TurnBatch<LiveRow, boolean>(async (rows) => {
    const last = new Map(rows.map((row) => [row.instance_id, row]));
    await this.deps.db
      .insertInto('sandbox_live')
      .values([...last.values()])
      .onConflict((oc) =>
        oc.column('instance_id').doUpdateSet((eb) => ({
          incarnation: eb.ref('excluded.incarnation'),
          owner_jid: eb.ref('excluded.owner_jid'),
          profile_name: eb.ref('excluded.profile_name'),
          since: eb.ref('excluded.since'),
        })),
      )
      .execute();
    const waiting = await this.deps.db
      .selectFrom('sandbox_mail')
      .select('instance_id')
      .distinct()
      .where('instance_id', 'in', [...last.keys()])
      .execute();
    const withLetters = new Set(waiting.map((row) => row.instance_id));
    return rows.map((row) => withLetters.has(row.instance_id));
  });

  /** Live rows withdrawn in one turn (a node stopping, its instances closing at once) go in one statement. */
  private readonly withdrawals = new TurnBatch<string, void>(async (instanceIds) => {
    await this.deps.db
      .deleteFrom('sandbox_live')
      .where('instance_id', 'in', [...new Set(instanceIds)])
      .where('incarnation', '=', this.deps.incarnation)
      .execute();
    return instanceIds.map(() => undefined);
  });

  constructor(private readonly deps: MailboxDeps) {
    if (!deps.fleet) return;
    deps.signals.listen(mailChannel, (instanceId) => {
      if (deps.isLocal(instanceId)) void this.drain(instanceId);
    });
    // Signals may have been missed: every instance live here looks for waiting letters.
    deps.signals.onResync(() => {
      for (const instanceId of deps.localIds()) void this.drain(instanceId);
    });
  }

  /** The instance went open on this node: its row says so, and the letters waiting for it are handed over. */
  announce(party: LinkedParty): Promise<void> {
    if (!this.deps.fleet) return Promise.resolve();
    return this.writeRow(party.instanceId, async () => {
      const lettersWait = await this.announcements.call({
        instance_id: party.instanceId,
        incarnation: this.deps.incarnation,
        owner_jid: party.ownerJid,
        profile_name: party.profileName,
        since: Date.now(),
      });
      // Letters posted from now on come with a signal; those already waiting are taken now.
      if (lettersWait) void this.drain(party.instanceId);
    });
  }

  /** The instance's connector here closed: its row goes (unless another node has written its own since). */
  withdraw(instanceId: string): Promise<void> {
    if (!this.deps.fleet) return Promise.resolve();
    return this.writeRow(instanceId, () => this.withdrawals.call(instanceId));
  }

  /** The instance as a party when it is live and linked on another node that is alive, else null. */
  async elsewhere(instanceId: string): Promise<LinkedParty | null> {
    if (!this.deps.fleet) return null;
    const row = await this.liveRows().where('sandbox_live.instance_id', '=', instanceId).executeTakeFirst();
    return row ? { instanceId: row.instance_id, ownerJid: row.owner_jid, profileName: row.profile_name } : null;
  }

  /** Every instance live and linked on another node that is alive. */
  async partiesElsewhere(): Promise<LinkedParty[]> {
    if (!this.deps.fleet) return [];
    const rows = await this.liveRows().execute();
    return rows.map((row) => ({ instanceId: row.instance_id, ownerJid: row.owner_jid, profileName: row.profile_name }));
  }

  /** Leaves `letter` for the instance and tells the nodes; the node that has it live hands it over. */
  async post(instanceId: string, letter: Letter): Promise<void> {
    await this.deps.db
      .insertInto('sandbox_mail')
      .values({ instance_id: instanceId, kind: letter.kind, payload: JSON.stringify(letter), created_at: Date.now() })
      .execute();
    await this.deps.signals.send(mailChannel, instanceId);
  }

  /** Takes and hands over every letter waiting for the instance (live here), oldest first; one drain per instance at a time. */
  drain(instanceId: string): Promise<void> {
    const running = this.drains.get(instanceId);
    if (running) {
      running.again = true;
      return running.done;
    }
    const entry = { again: false, done: Promise.resolve() };
    entry.done = (async () => {
      try {
        do {
          entry.again = false;
          while (this.deps.isLocal(instanceId) && (await this.takeBatch(instanceId)) === batchSize) {
            // A full batch: there may be more.
          }
        } while (entry.again);
      } catch (error) {
        this.deps.logger.error({ err: error, instanceId }, 'sandbox letters not taken; they wait for the next signal or start');
      } finally {
        this.drains.delete(instanceId);
      }
    })();
    this.drains.set(instanceId, entry);
    return entry.done;
  }

  /** Takes up to a batch of letters (deleted as taken) and hands them over in order; answers how many were taken. */
  private async takeBatch(instanceId: string): Promise<number> {
    const { db } = this.deps;
    const rows = await db
      .deleteFrom('sandbox_mail')
      .where('id', 'in', (eb) =>
        eb.selectFrom('sandbox_mail').select('id').where('instance_id', '=', instanceId).orderBy('id').limit(batchSize).forUpdate().skipLocked(),
      )
      .returning(['id', 'kind', 'payload'])
      .execute();
    rows.sort((a, b) => Number(a.id) - Number(b.id));
    // Handed over in one turn, in order, as the router reports a batch (the core records them together).
    const handed = rows.map((row) => {
      const letter = letterOf(row.kind, row.payload);
      if (letter === null) {
        this.deps.logger.warn({ instanceId, kind: row.kind }, 'sandbox letter of an unknown kind dropped');
        return Promise.resolve();
      }
      return this.deps.deliver(instanceId, letter);
    });
    const results = await Promise.allSettled(handed);
    for (const result of results) {
      if (result.status === 'rejected') this.deps.logger.error({ err: result.reason, instanceId }, 'sandbox letter not handed over');
    }
    return rows.length;
  }

  /** Live rows of other nodes that are alive (running, heartbeat recent). */
  private liveRows() {
    return this.deps.db
      .selectFrom('sandbox_live')
      .innerJoin('nodes', 'nodes.incarnation', 'sandbox_live.incarnation')
      .select(['sandbox_live.instance_id', 'sandbox_live.owner_jid', 'sandbox_live.profile_name'])
      .where('sandbox_live.incarnation', '<>', this.deps.incarnation)
      .where('nodes.stopped_at', 'is', null)
      .where('nodes.heartbeat_at', '>=', Date.now() - this.deps.deadAfterMs);
  }

  private writeRow(instanceId: string, write: () => Promise<void>): Promise<void> {
    const previous = this.rowWrites.get(instanceId) ?? Promise.resolve();
    const run = previous.then(write, write);
    const settled = run.catch(() => undefined);
    this.rowWrites.set(instanceId, settled);
    void settled.then(() => {
      if (this.rowWrites.get(instanceId) === settled) this.rowWrites.delete(instanceId);
    });
    return run;
  }
}

/** The letters and the live row of a deleted instance (a removal hook). */
export async function removeMailOf(unit: Unit, instance: Instance): Promise<void> {
  await unit.tx.deleteFrom('sandbox_mail').where('instance_id', '=', instance.id).execute();
  await unit.tx.deleteFrom('sandbox_live').where('instance_id', '=', instance.id).execute();
}
