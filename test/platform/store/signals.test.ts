// Signals between the nodes of one store: sent in a unit they arrive after its commit and never after a rollback;
// on PostgreSQL a second store on the same schema hears them, another schema does not, and a lost connection comes back.
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/platform/store/db.js';
import { inUnit } from '../../../src/platform/store/unit.js';
import { storeTargets } from '../../support/harness.js';
import { pgQuery, pgUrl, scratchSchema } from '../../support/postgres.js';
import { waitFor } from '../../support/wait.js';

const targets = await storeTargets();

/** The process warnings of this file's run: pg warns once per process of a query sent on a client already busy. */
const warnings: Error[] = [];
process.on('warning', (warning) => warnings.push(warning));
const busyClientWarnings = () => warnings.filter((warning) => warning.message.includes('already executing a query'));

describe.each(targets)('store signals on $name', (target) => {
  const opened: { store: Store; dispose(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const o of opened) {
      await o.store.close();
      await o.dispose();
    }
  });

  it.skipIf(!target.available)('a signal sent in a unit arrives once it commits, and never when it rolls back', async () => {
    const o = await target.open();
    opened.push(o);
    const heard: string[] = [];
    o.store.signals.listen('test', (payload) => heard.push(payload));
    await new Promise((r) => setTimeout(r, 200)); // the listening connection is up
    await inUnit(o.store.db, async (unit) => {
      await o.store.signals.sendIn(unit, 'test', 'committed');
      expect(heard).toEqual([]);
    });
    await inUnit(o.store.db, async (unit) => {
      await o.store.signals.sendIn(unit, 'test', 'rolled back');
      throw new Error('undo');
    }).catch(() => undefined);
    await o.store.signals.send('test', 'direct');
    await waitFor(() => heard.length === 2, 5000);
    await new Promise((r) => setTimeout(r, 100));
    expect(heard).toEqual(['committed', 'direct']);
  });
});

describe('store signals between PostgreSQL stores', () => {
  const pg = targets.find((t) => t.name === 'postgres');
  it.skipIf(!pg?.available)('reach another store on the same schema, not one on another schema, and survive a lost connection', async () => {
    const schema = await scratchSchema();
    const other = await scratchSchema();
    const a = await openStore(pgUrl, { schema: schema.schema });
    const b = await openStore(pgUrl, { schema: schema.schema });
    const c = await openStore(pgUrl, { schema: other.schema });
    try {
      const heardB: string[] = [];
      const heardC: string[] = [];
      let resyncs = 0;
      b.signals.listen('wake', (p) => heardB.push(p));
      b.signals.onResync(() => resyncs++);
      c.signals.listen('wake', (p) => heardC.push(p));
      await new Promise((r) => setTimeout(r, 300));
      await a.signals.send('wake', 'one');
      await waitFor(() => heardB.length === 1, 5000);
      // The listening connection is killed from the server side: it comes back and says signals may have been missed.
      await pgQuery("select pg_terminate_backend(pid) from pg_stat_activity where query like 'listen %' and query like $1", [`%${schema.schema}.wake%`]);
      await waitFor(() => resyncs === 1, 10_000);
      await a.signals.send('wake', 'two');
      await waitFor(() => heardB.length === 2, 5000);
      expect(heardB).toEqual(['one', 'two']);
      expect(heardC).toEqual([]);
    } finally {
      await a.close();
      await b.close();
      await c.close();
      await schema.drop();
      await other.drop();
    }
  });
});

describe('store signals listened to while the listening connection opens', () => {
  const pg = targets.find((t) => t.name === 'postgres');
  it.skipIf(!pg?.available)('hear every channel, also those added after the connection began listening', async () => {
    const schema = await scratchSchema();
    const listener = await openStore(pgUrl, { schema: schema.schema });
    const sender = await openStore(pgUrl, { schema: schema.schema });
    try {
      const heard = new Set<string>();
      // Channels added a millisecond apart while the first one connects and listens (a node's parts listen as they start).
      const channels = Array.from({ length: 100 }, (_, i) => `ch${i}`);
      for (const channel of channels) {
        listener.signals.listen(channel, () => heard.add(channel));
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await new Promise((r) => setTimeout(r, 500));
      for (const channel of channels) await sender.signals.send(channel, 'hello');
      await waitFor(() => heard.size === channels.length, 5000, {
        what: () => `every channel heard (missing: ${channels.filter((c) => !heard.has(c)).join(', ')})`,
      });
    } finally {
      await listener.close();
      await sender.close();
      await schema.drop();
    }
  });
});

describe('store signals listened to on many channels at once', () => {
  const pg = targets.find((t) => t.name === 'postgres');
  it.skipIf(!pg?.available)('hear every channel, and pg is never asked two things at once on the listening connection', async () => {
    const schema = await scratchSchema();
    const listener = await openStore(pgUrl, { schema: schema.schema });
    const sender = await openStore(pgUrl, { schema: schema.schema });
    try {
      const heard = new Set<string>();
      listener.signals.listen('first', () => heard.add('first'));
      await sender.signals.send('first', 'hello');
      await waitFor(
        async () => {
          if (!heard.has('first')) await sender.signals.send('first', 'hello');
          return heard.has('first');
        },
        5000,
        { what: () => 'the listening connection up' },
      );
      // All in one go on a connection that is up (a node's parts starting together).
      const channels = Array.from({ length: 200 }, (_, i) => `many${i}`);
      for (const channel of channels) listener.signals.listen(channel, () => heard.add(channel));
      await waitFor(
        async () => {
          for (const channel of channels) if (!heard.has(channel)) await sender.signals.send(channel, 'hello');
          return channels.every((channel) => heard.has(channel));
        },
        10_000,
        { what: () => `every channel heard (missing: ${channels.filter((c) => !heard.has(c)).join(', ')})` },
      );
      await new Promise((resolve) => setImmediate(resolve)); // a warning is emitted on the next tick
      expect(busyClientWarnings().map((warning) => warning.message)).toEqual([]);
    } finally {
      await listener.close();
      await sender.close();
      await schema.drop();
    }
  });
});

describe('where a signal came from, and many sent at once', () => {
  const pg = targets.find((t) => t.name === 'postgres');
  it.skipIf(!pg?.available)("a store hears its own signals as its own and the other stores' as theirs; sendEachIn sends each payload once", async () => {
    const schema = await scratchSchema();
    const a = await openStore(pgUrl, { schema: schema.schema });
    const b = await openStore(pgUrl, { schema: schema.schema });
    try {
      const heardByA: { payload: string; own: boolean }[] = [];
      a.signals.listen('origin', (payload, fromThisNode) => heardByA.push({ payload, own: fromThisNode }));
      await waitFor(
        async () => {
          await a.signals.send('origin', 'probe');
          return heardByA.length > 0;
        },
        5000,
        { what: 'the listening connection up' },
      );
      heardByA.length = 0;
      await a.signals.send('origin', 'from a');
      await b.signals.send('origin', 'from b');
      await inUnit(a.db, (unit) => a.signals.sendEachIn(unit, 'origin', ['a1', 'a2', 'a3']));
      await inUnit(b.db, (unit) => b.signals.sendEachIn(unit, 'origin', ['b1', 'b2']));
      const sent = ['from a', 'a1', 'a2', 'a3', 'from b', 'b1', 'b2'];
      await waitFor(() => sent.every((p) => heardByA.some((h) => h.payload === p)), 5000, { what: () => `every signal (heard ${JSON.stringify(heardByA)})` });
      // Each once (probes sent while the connection came up may still arrive: they are not counted).
      expect(heardByA.filter((h) => sent.includes(h.payload)).length).toBe(sent.length);
      const own = (payload: string) => heardByA.find((h) => h.payload === payload)?.own;
      expect(['from a', 'a1', 'a2', 'a3'].map(own)).toEqual([true, true, true, true]);
      expect(['from b', 'b1', 'b2'].map(own)).toEqual([false, false, false]);
      // A rolled-back unit sends none of them.
      await inUnit(a.db, async (unit) => {
        await a.signals.sendEachIn(unit, 'origin', ['never']);
        throw new Error('undo');
      }).catch(() => undefined);
      await b.signals.send('origin', 'last');
      await waitFor(() => heardByA.some((h) => h.payload === 'last'), 5000);
      expect(heardByA.map((h) => h.payload)).not.toContain('never');
    } finally {
      await a.close();
      await b.close();
      await schema.drop();
    }
  });
});
