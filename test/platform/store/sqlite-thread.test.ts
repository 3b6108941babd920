// The SQLite store's thread: values, errors, transactions and ordering as callers on the event loop see them.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/platform/store/db.js';
import { GroupCommit } from '../../../src/platform/store/group-commit.js';
import { inInsertUnit, inUnit } from '../../../src/platform/store/unit.js';
import { inWriteUnit } from '../../../src/platform/store/write-unit.js';
import { sqliteThreadOf } from '../../../src/platform/store/sqlite-thread/dialect.js';

const dir = mkdtempSync(join(tmpdir(), 'sb-sqlite-thread-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function outboxRow(id: string) {
  return { id, instance_id: 'i', instance_name: 'i', event: 'MESSAGES_UPSERT', body: '{}', created_at: 1 };
}

describe('SQLite store thread', () => {
  let store: Store;
  let n = 0;
  beforeEach(async () => {
    store = await openStore(`file:${join(dir, `t${n++}.db`)}`);
  });
  afterEach(async () => {
    await store.close();
  });

  const ids = async () => (await store.db.selectFrom('outbox').select('id').orderBy('seq').execute()).map((row) => row.id);

  it('gives BLOBs back as Buffers, byte for byte', async () => {
    const data = Buffer.from([0, 1, 2, 250, 255, 0, 7]);
    await store.db.insertInto('media_blobs').values({ id: 'b1', instance_id: 'i', data, created_at: 1 }).execute();
    const row = await store.db.selectFrom('media_blobs').selectAll().where('id', '=', 'b1').executeTakeFirstOrThrow();
    expect(Buffer.isBuffer(row.data)).toBe(true);
    expect(row.data.equals(data)).toBe(true);
    expect(row.data.toString('base64')).toBe(data.toString('base64'));
  });

  it("reports SQLite's error code and message, and the connection stays usable", async () => {
    await store.db.insertInto('outbox').values(outboxRow('dup')).execute();
    const error = await store.db
      .insertInto('outbox')
      .values(outboxRow('dup'))
      .execute()
      .then(
        () => undefined,
        (e: unknown) => e as { code?: string; message?: string },
      );
    expect(error?.code).toBe('SQLITE_CONSTRAINT_UNIQUE');
    expect(error?.message).toMatch(/UNIQUE constraint failed: outbox\.id/);
    await expect(store.db.selectFrom('outbox').select('id').execute()).resolves.toEqual([{ id: 'dup' }]);
  });

  it('a query made while a transaction is open runs outside it: a rollback takes only the transaction’s rows', async () => {
    let inside!: () => void;
    const insideDone = new Promise<void>((resolve) => (inside = resolve));
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    const transaction = store.db
      .transaction()
      .execute(async (tx) => {
        await tx.insertInto('outbox').values(outboxRow('in-transaction')).execute();
        inside();
        await held;
        throw new Error('roll back');
      })
      .catch((error: Error) => error.message);
    await insideDone;
    // Sent while the transaction is open: it waits for it to end instead of joining it.
    const outside = store.db.insertInto('outbox').values(outboxRow('outside')).execute();
    const seen = store.db.selectFrom('outbox').select('id').execute();
    finish();
    expect(await transaction).toBe('roll back');
    await outside;
    expect((await seen).map((row) => row.id)).toEqual(['outside']);
    expect(await ids()).toEqual(['outside']);
  });

  it('a write unit is atomic: a failing statement leaves nothing of it, and the guarded rows follow the guard', async () => {
    await store.db
      .insertInto('outbox')
      .values([outboxRow('a'), outboxRow('b')])
      .execute();
    await expect(
      inWriteUnit(store.db, (unit) => {
        unit.write(store.db.deleteFrom('outbox').where('id', '=', 'a'));
        unit.insert('outbox', outboxRow('b')); // duplicate: the unit fails
      }),
    ).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_UNIQUE' });
    expect(await ids()).toEqual(['a', 'b']);

    const guards = await inWriteUnit(store.db, (unit) => {
      unit.guardBy(store.db.updateTable('outbox').set({ body: '{"moved":true}' }).where('id', 'in', ['a', 'missing']).returning('id'));
      unit.guarded('a').insert('outbox', outboxRow('after-a'));
      unit.guarded('missing').insert('outbox', outboxRow('after-missing'));
      unit.insert('outbox', outboxRow('plain'));
    });
    expect([...guards]).toEqual(['a']);
    expect(await ids()).toEqual(['a', 'b', 'plain', 'after-a']);
  });

  it('group commits with several batches in flight still commit in submission order', async () => {
    const commits = new GroupCommit(store.db, inInsertUnit, 16, 3);
    const submitted: Promise<unknown>[] = [];
    const expected: string[] = [];
    for (let turn = 0; turn < 20; turn++) {
      for (let i = 0; i < 25; i++) {
        const id = `e-${turn}-${i}`;
        expected.push(id);
        submitted.push(commits.run((unit) => unit.insert('outbox', outboxRow(id))));
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(submitted);
    expect(await ids()).toEqual(expected);
  });

  it('transactions from many callers at once each see only their own work, and all commit', async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        inUnit(store.db, async (unit) => {
          const before = await unit.tx.selectFrom('outbox').select('id').where('id', 'like', `t${i}-%`).execute();
          expect(before).toEqual([]);
          unit.insert('outbox', outboxRow(`t${i}-1`));
          unit.insert('outbox', outboxRow(`t${i}-2`));
        }),
      ),
    );
    expect((await ids()).length).toBe(40);
  });

  /** One INSERT of an outbox row, as the thread takes it. */
  const insertRow = (id: string) => [
    { sql: 'insert into outbox (id, instance_id, instance_name, event, body, created_at) values (?, ?, ?, ?, ?, ?)', parameters: [id, 'i', 'i', 'E', '{}', 1] },
  ];

  it('background writes wait for the foreground requests in flight, and keep their own order', async () => {
    const thread = sqliteThreadOf(store.db)!;
    await Promise.all([
      thread.runOutside(insertRow('f1'), true),
      thread.runOutside(insertRow('b1'), true, true),
      thread.runOutside(insertRow('b2'), true, true),
      thread.runOutside(insertRow('f2'), true),
    ]);
    expect(await ids()).toEqual(['f1', 'f2', 'b1', 'b2']);
    // With nothing in flight a background write goes at once.
    await thread.runOutside(insertRow('b3'), true, true);
    expect(await ids()).toEqual(['f1', 'f2', 'b1', 'b2', 'b3']);
  });

  it('a background write waits a few ms at most, even while a foreground request is still running', async () => {
    const thread = sqliteThreadOf(store.db)!;
    // A foreground query that keeps the thread busy for a while (a count to a few million).
    const slow = thread.runOutside(
      [{ sql: 'with recursive c(x) as (select 1 union all select x + 1 from c where x < 1000000) select count(*) as n from c', parameters: [] }],
      false,
    );
    const background = thread.runOutside(insertRow('b1'), true, true);
    await new Promise((resolve) => setTimeout(resolve, 40));
    // Sent well after the background write's few ms were up: it goes after it, though the slow query is still running.
    const later = thread.runOutside(insertRow('f2'), true);
    const [answer] = await Promise.all([slow, background, later]);
    expect(answer.results[0].rows).toEqual([{ n: 1000000 }]);
    expect(await ids()).toEqual(['b1', 'f2']);
  });

  it('a transaction begun after a held-back background write sees it', async () => {
    const thread = sqliteThreadOf(store.db)!;
    const foreground = thread.runOutside(insertRow('f1'), true);
    const held = thread.runOutside(insertRow('b1'), true, true);
    const seen = await store.db.transaction().execute((tx) => tx.selectFrom('outbox').select('id').orderBy('seq').execute());
    expect(seen.map((row) => row.id)).toEqual(['f1', 'b1']);
    await Promise.all([foreground, held]);
  });
});

describe('SQLite store thread, opening and closing', () => {
  it('refuses queries after close with an error that says so', async () => {
    const store = await openStore(`file:${join(dir, 'closed.db')}`);
    await store.db.insertInto('outbox').values(outboxRow('x')).execute();
    await store.close();
    await expect(store.db.selectFrom('outbox').selectAll().execute()).rejects.toThrow(/destroyed/);
    await expect(store.ping()).rejects.toThrow(/SQLite store is closed/);
  });

  it('fails to open a path it cannot use as a database, naming it', async () => {
    const folder = join(dir, 'a-folder.db');
    mkdirSync(folder);
    // SQLite's own reason and code, not only that the thread stopped; the line names the setting to fix.
    await expect(openStore(`file:${folder}`)).rejects.toMatchObject({
      message: expect.stringMatching(/^DATABASE_CONNECTION_URI: cannot open the SQLite database at .*a-folder\.db \(unable to open database file/),
      cause: expect.objectContaining({ code: 'SQLITE_CANTOPEN' }),
    });
  });

  it('works on an in-memory database', async () => {
    const store = await openStore('file::memory:');
    try {
      await inInsertUnit(store.db, async (unit) => {
        unit.insert('outbox', outboxRow('m1'));
        unit.insert('outbox', outboxRow('m2'));
      });
      expect((await store.db.selectFrom('outbox').select('id').orderBy('seq').execute()).map((r) => r.id)).toEqual(['m1', 'm2']);
    } finally {
      await store.close();
    }
  });
});
