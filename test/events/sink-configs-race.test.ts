// Event settings kept in memory follow the store without losing a change made here: a read-back that raced a local
// change is read again, so events written right after a settings change see it (on both stores).
import { afterAll, describe, expect, it } from 'vitest';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { SinkConfigs } from '../../src/events/sink-configs.js';
import { inUnit } from '../../src/platform/store/unit.js';
import type { Store } from '../../src/platform/store/db.js';
import { storeTargets } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

/** Holds the result of the next read (of `event_sinks`: the only table read through it), once armed, until released: the read has run, its answer waits. */
class HeldRead implements KyselyPlugin {
  private armed = false;
  private release: (() => void) | undefined;
  held = false;

  arm(): void {
    this.armed = true;
  }

  open(): void {
    this.release?.();
  }

  private readonly reads = new WeakSet<object>();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind === 'SelectQueryNode') this.reads.add(args.queryId);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.armed && this.reads.has(args.queryId)) {
      this.armed = false;
      this.held = true;
      await new Promise<void>((resolve) => (this.release = resolve));
    }
    return args.result;
  }
}

const targets = await storeTargets();

describe.each(targets)('event settings in memory on $name', (target) => {
  const opened: { store: Store; dispose(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const o of opened) {
      await o.store.close();
      await o.dispose();
    }
  });

  it.skipIf(!target.available)('a read-back that raced a change made here is read again, never applied over it', async () => {
    const o = await target.open();
    opened.push(o);
    const held = new HeldRead();
    const configs = new SinkConfigs(o.store.db.withPlugin(held), o.store.signals);
    const stop = configs.follow(o.store.signals, (error) => {
      throw error;
    });
    try {
      await new Promise((r) => setTimeout(r, 200)); // the listening connection is up
      const config = (events: string[]) => ({ enabled: true, events: events as never[], options: {}, updatedAt: Date.now() });
      // The first change's read-back runs and its answer (RabbitMQ only) is held back.
      held.arm();
      await inUnit(o.store.db, (unit) => configs.set(unit, 'inst-1', 'rabbitmq', config(['MESSAGES_UPSERT'])));
      await waitFor(() => held.held, 5000, { what: 'the read-back of the first change' });
      // A second change is made here meanwhile and committed.
      await inUnit(o.store.db, (unit) => configs.set(unit, 'inst-1', 'nats', config([])));
      expect(configs.get('inst-1', 'nats')).toMatchObject({ enabled: true });
      // The stale answer arrives: it is not applied over the second change, at no moment.
      held.open();
      const deadline = Date.now() + 300;
      while (Date.now() < deadline) {
        expect(configs.get('inst-1', 'nats'), 'NATS settings made here').toMatchObject({ enabled: true });
        expect(configs.get('inst-1', 'rabbitmq')).toMatchObject({ events: ['MESSAGES_UPSERT'] });
        await new Promise((r) => setImmediate(r));
      }
      // A change rolled back leaves what the store holds.
      await inUnit(o.store.db, async (unit) => {
        await configs.set(unit, 'inst-1', 'nats', config(['SEND_MESSAGE']));
        throw new Error('undo');
      }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 100));
      expect(configs.get('inst-1', 'nats')).toMatchObject({ enabled: true, events: [] });
    } finally {
      stop();
    }
  });
});
