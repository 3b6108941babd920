// A node that re-reads everything (after its listening connection was lost) while it changes instances itself: the
// changes it made during the read win over what the read found, for instances (settings, created, deleted) and for
// their webhook settings; what raced is answered, to be read again.
import {
  TableNode,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryId,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/platform/store/db.js';
import { startFleet, storeTargets, type TestApp } from '../support/harness.js';
import { uniqueName } from '../support/unique.js';

const targets = await storeTargets();
const pg = targets.find((t) => t.name === 'postgres');

/** Holds back the answer of the next full read of `table` (a SELECT with no WHERE) until released. */
class HeldFullRead implements KyselyPlugin {
  private readonly reads = new WeakSet<QueryId>();
  private armed = false;
  private answered: () => void = () => undefined;
  private release: () => void = () => undefined;

  constructor(private readonly table: string) {}

  /** Arms the hold: resolves once the read has run in the store (its answer held). */
  arm(): { ranInStore: Promise<void>; release: () => void } {
    this.armed = true;
    const ranInStore = new Promise<void>((resolve) => (this.answered = resolve));
    const released = new Promise<void>((resolve) => (this.release = resolve));
    this.held = released;
    return { ranInStore, release: () => this.release() };
  }

  private held: Promise<void> = Promise.resolve();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    if (this.armed && node.kind === 'SelectQueryNode' && !node.where) {
      const from = node.from?.froms[0];
      if (from && TableNode.is(from) && from.table.identifier.name === this.table) {
        this.reads.add(args.queryId);
        this.armed = false;
      }
    }
    return node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.reads.has(args.queryId)) {
      this.answered();
      await this.held;
    }
    return args.result;
  }
}

/** Runs `read` (a full re-read) on `owner` through a store whose full read of `table` is held until `meanwhile` is done. */
async function readRacing<T>(owner: { db: Db }, table: string, read: () => Promise<T>, meanwhile: () => Promise<void>): Promise<T> {
  const plugin = new HeldFullRead(table);
  const original = owner.db;
  owner.db = original.withPlugin(plugin);
  try {
    const hold = plugin.arm();
    const reading = read();
    await hold.ranInStore;
    await meanwhile();
    hold.release();
    return await reading;
  } finally {
    owner.db = original;
  }
}

describe.skipIf(!pg?.available)('a full re-read racing changes made on the same node (PostgreSQL)', () => {
  let fleet: Awaited<ReturnType<typeof startFleet>>;
  let node: TestApp;

  beforeAll(async () => {
    fleet = await startFleet(1);
    [node] = fleet.nodes as [TestApp];
  });
  afterAll(async () => {
    await fleet?.close();
  });

  const create = async (name: string) => {
    const created = await node.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.instance.instanceId as string;
  };

  it('keeps instances changed, created and deleted during the read as they were made, and answers them to read again', async () => {
    const changed = uniqueName('race-changed');
    const deleted = uniqueName('race-deleted');
    const untouched = uniqueName('race-untouched');
    const changedId = await create(changed);
    await create(deleted);
    await create(untouched);
    const createdMeanwhile = uniqueName('race-created');
    const registry = node.services.registry as unknown as { db: Db; load(): Promise<string[]> };

    const again = await readRacing(
      registry,
      'instances',
      () => registry.load(),
      async () => {
        const set = await node.api('POST', `settings/set/${changed}`, { body: { rejectCall: true, msgCall: 'set during the read' } });
        expect(set.status, JSON.stringify(set.body)).toBe(201);
        await create(createdMeanwhile);
        expect((await node.api('DELETE', `instance/delete/${deleted}`)).status).toBe(200);
      },
    );

    // The read found the old settings, no new instance and the deleted one: none of that is applied.
    expect((await node.api('GET', `settings/find/${changed}`)).body).toMatchObject({ rejectCall: true, msgCall: 'set during the read' });
    expect((await node.api('GET', `instance/fetchInstances?instanceName=${createdMeanwhile}`)).status).toBe(200);
    expect((await node.api('GET', `instance/connectionState/${deleted}`)).status).toBe(404);
    expect((await node.api('GET', `instance/fetchInstances?instanceName=${untouched}`)).status).toBe(200);
    expect(again).toContain(changedId);
    expect(again.length).toBeGreaterThanOrEqual(2);
  });

  it('keeps webhook settings set during the read', async () => {
    const name = uniqueName('race-webhook');
    await create(name);
    const sinks = node.services.sinks as unknown as { db: Db; load(): Promise<string[]> };
    const again = await readRacing(
      sinks,
      'event_sinks',
      () => sinks.load(),
      async () => {
        const set = await node.api('POST', `webhook/set/${name}`, {
          body: { webhook: { enabled: true, url: 'http://127.0.0.1:9/set-during-the-read', events: ['MESSAGES_UPSERT'] } },
        });
        expect(set.status, JSON.stringify(set.body)).toBe(201);
      },
    );
    const found = await node.api('GET', `webhook/find/${name}`);
    expect(found.body).toMatchObject({ enabled: true, url: 'http://127.0.0.1:9/set-during-the-read' });
    expect(again.length).toBe(1);
  });
});
