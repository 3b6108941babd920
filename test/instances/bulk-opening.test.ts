// A node opening many sandbox instances at once (a restart, a takeover) does the store work of all of them together:
// sessions, labels and live rows read and written a batch at a time, connection changes stored in shared transactions
// (rows left as they are not rewritten), each instance open with its one `connection.update`, one instance that
// lost its owner row refused alone without failing the others of its batch, and their live rows withdrawn together at
// a clean stop.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompiledQuery } from 'kysely';
import type { Store } from '../../src/platform/store/db.js';
import { InstanceFencedError } from '../../src/platform/cluster/ownership-fence.js';
import { appOnStore, removeDataDir, storeKeys, type AppOnStore, type StoreKeys } from '../support/app-on-store.js';
import { storeTargets } from '../support/harness.js';
import { uniqueName, uniqueNumber } from '../support/unique.js';
import { waitFor } from '../support/wait.js';

const targets = await storeTargets();
const instances = 40;

/** A SANDBOX instance created and linked (its QR code scanned) through `app`: it has a session and is open. */
async function linked(app: AppOnStore, name: string): Promise<string> {
  const created = await app.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX', qrcode: true } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const scan = await app.api('POST', 'sandbox/scan', { body: { code: created.body.qrcode.code, number: uniqueNumber('4915') } });
  expect(scan.status, JSON.stringify(scan.body)).toBe(200);
  return created.body.instance.instanceId as string;
}

/** Every statement Kysely runs in this process while `body` runs (the app runs in-process). */
async function statementsDuring(store: Store, body: () => Promise<void>): Promise<string[]> {
  // The executors of the store and of its transactions share this prototype method.
  const base = Object.getPrototypeOf(Object.getPrototypeOf(store.db.getExecutor())) as {
    executeQuery: (query: CompiledQuery, ...rest: unknown[]) => Promise<unknown>;
  };
  const original = base.executeQuery;
  const seen: string[] = [];
  base.executeQuery = function (this: unknown, query: CompiledQuery, ...rest: unknown[]) {
    seen.push(query.sql);
    return original.call(this, query, ...rest);
  };
  try {
    await body();
  } finally {
    base.executeQuery = original;
  }
  return seen;
}

describe.each(targets)('a node opening many sandbox instances at once on $name', (target) => {
  describe.skipIf(!target.available)('store', () => {
    let opened: Awaited<ReturnType<typeof target.open>>;
    let keys: StoreKeys;
    let app: AppOnStore | undefined;
    const ids: string[] = [];

    beforeAll(async () => {
      opened = await target.open();
      keys = storeKeys(opened.uri);
      app = await appOnStore(opened.store, keys);
      for (let i = 0; i < instances; i++) ids.push(await linked(app, uniqueName('bulk')));
    });
    afterAll(async () => {
      await app?.close();
      await opened?.store.close();
      await opened?.dispose();
      if (keys) removeDataDir(keys);
    });

    it('opens them all on a restart with a few statements per kind of work, each with its connection.update', async () => {
      const db = opened.store.db;
      await app?.close();
      app = undefined;
      // One instance's stored profile name differs from its session: that row is rewritten, the others are not.
      const [stale] = ids;
      await db.updateTable('instances').set({ profile_name: 'stale name' }).where('id', '=', stale).execute();
      const before = new Map((await db.selectFrom('instances').select(['id', 'updated_at']).execute()).map((row) => [row.id, Number(row.updated_at)]));
      const labelsBefore = await db.selectFrom('labels').select(['instance_id', 'label_id', 'name']).orderBy('instance_id').orderBy('label_id').execute();
      expect(labelsBefore.length).toBe(instances * 5); // WhatsApp Business's five default labels each
      const restartedAt = Date.now();

      let lastListing: unknown;
      const statements = await statementsDuring(opened.store, async () => {
        app = await appOnStore(opened.store, keys);
        await waitFor(
          async () => {
            const listed = await app?.api('GET', 'instance/fetchInstances');
            lastListing = listed?.body;
            return (
              listed?.status === 200 && listed.body.filter((entry: { instance: { status: string } }) => entry.instance.status === 'open').length === instances
            );
          },
          20_000,
          { what: () => `every instance open after the restart: ${JSON.stringify(lastListing).slice(0, 600)}` },
        );
        await waitFor(() => app?.services.lifecycle.openingCount() === 0, 5_000, { what: 'nothing left to open' });
      });

      // Old code read each instance's session, sandbox labels and stored labels with a statement of its own (40 each).
      const touching = (pattern: RegExp) => statements.filter((sql) => pattern.test(sql)).length;
      expect(touching(/from "sessions"/)).toBeLessThanOrEqual(4);
      expect(touching(/from "sandbox_labels"/)).toBeLessThanOrEqual(4);
      expect(touching(/from "labels"/)).toBeLessThanOrEqual(4);
      // Labels synced as they are stored: nothing written.
      expect(touching(/^(insert into|delete from) "labels"/)).toBe(0);
      expect(await db.selectFrom('labels').select(['instance_id', 'label_id', 'name']).orderBy('instance_id').orderBy('label_id').execute()).toEqual(
        labelsBefore,
      );

      const events = await db
        .selectFrom('outbox')
        .select(['instance_id', 'body'])
        .where('event', '=', 'CONNECTION_UPDATE')
        .where('created_at', '>=', restartedAt)
        .execute();
      for (const id of ids) {
        const own = events.filter((event) => event.instance_id === id).map((event) => JSON.parse(event.body).data.state);
        expect(own, `connection.update of ${id}`).toEqual(['open']);
      }

      const after = new Map((await db.selectFrom('instances').select(['id', 'updated_at', 'profile_name', 'status']).execute()).map((row) => [row.id, row]));
      expect(after.get(stale)?.profile_name).not.toBe('stale name');
      expect(Number(after.get(stale)?.updated_at)).toBeGreaterThan(before.get(stale) ?? 0);
      for (const id of ids) expect(after.get(id)?.status).toBe('open');
      if (target.name === 'postgres') {
        // Rows the opening leaves as they were are not written (PostgreSQL writes the batch in one statement).
        for (const id of ids.slice(1)) expect(Number(after.get(id)?.updated_at), id).toBe(before.get(id));
        expect(touching(/^update instances as i/)).toBeLessThanOrEqual(4);
      }
    });

    // PostgreSQL only: a fleet's store (SQLite has one node, which owns everything).
    if (target.name === 'postgres')
      it('refuses a connection change of an instance taken over, alone: the others of its batch are stored', async () => {
        const running = app as AppOnStore;
        const db = opened.store.db;
        const [taken, ...others] = ids.slice(0, 4);
        // Another node took it over (its generation moved on): this node's writes for it are refused by the fence.
        await db
          .updateTable('instance_owners')
          .set((eb) => ({ generation: eb('generation', '+', 1) }))
          .where('instance_id', '=', taken)
          .execute();
        const since = Date.now();
        const reported = await Promise.allSettled(
          [taken, ...others].map((id) => running.services.connectorHost.connectionChanged(id, { state: 'connecting', reason: 'batch test' })),
        );
        expect(reported[0].status).toBe('rejected');
        expect((reported[0] as PromiseRejectedResult).reason).toBeInstanceOf(InstanceFencedError);
        expect(reported.slice(1).map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
        const states = new Map(
          (
            await db
              .selectFrom('instances')
              .select(['id', 'status'])
              .where('id', 'in', [taken, ...others])
              .execute()
          ).map((r) => [r.id, r.status]),
        );
        expect(states.get(taken)).toBe('open');
        for (const id of others) expect(states.get(id)).toBe('connecting');
        const events = await db.selectFrom('outbox').select('instance_id').where('event', '=', 'CONNECTION_UPDATE').where('created_at', '>=', since).execute();
        expect(events.map((e) => e.instance_id).sort()).toEqual([...others].sort());
      });

    // PostgreSQL only: the live rows tell the other nodes of a fleet where each sandbox instance is.
    if (target.name === 'postgres')
      it('withdraws the live rows of all its sandbox instances together at a clean stop', async () => {
        const db = opened.store.db;
        const liveRows = () => db.selectFrom('sandbox_live').select('instance_id').where('instance_id', 'in', ids).execute();
        // All but the one taken over above (stopped here then, its row withdrawn with it).
        expect((await liveRows()).length).toBe(instances - 1);
        const statements = await statementsDuring(opened.store, async () => {
          await app?.close();
          app = undefined;
        });
        // Old code deleted each instance's row with a statement of its own (39 here, 10,000 on a large node).
        expect(statements.filter((sql) => /^delete from "sandbox_live"/.test(sql)).length).toBeLessThanOrEqual(2);
        expect(await liveRows()).toEqual([]);
      });
  });
});
