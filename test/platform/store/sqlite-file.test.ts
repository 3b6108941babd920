// The SQLite store's file: how a new database is laid out, and that an existing one is opened as it is.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/platform/store/db.js';

describe('SQLite store file', () => {
  const dirs: string[] = [];
  const stores: Store[] = [];
  const newPath = () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-sqlite-file-'));
    dirs.push(dir);
    return join(dir, 'store.db');
  };
  const open = async (path: string) => {
    const store = await openStore(`file:${path}`);
    stores.push(store);
    return store;
  };
  const pragma = async (store: Store, name: 'page_size' | 'journal_mode') => {
    const { rows } = await sql<Record<string, unknown>>`${sql.raw(`pragma ${name}`)}`.execute(store.db);
    return rows[0]?.[name];
  };

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('lays a new database out in 2 KiB pages, in WAL mode', async () => {
    const store = await open(newPath());
    expect(await pragma(store, 'page_size')).toBe(2048);
    expect(await pragma(store, 'journal_mode')).toBe('wal');
  });

  it('opens a database made with other pages as it is: its pages, its rows, and the migrations applied', async () => {
    const path = newPath();
    const earlier = new Database(path);
    earlier.pragma('page_size = 4096');
    earlier.exec("create table kept (note text); insert into kept values ('written before')");
    earlier.close();

    const store = await open(path);
    expect(await pragma(store, 'page_size')).toBe(4096);
    const { rows } = await sql<{ note: string }>`select note from kept`.execute(store.db);
    expect(rows).toEqual([{ note: 'written before' }]);
    // The store works on it: a row of its own schema goes in and comes back.
    await store.db
      .insertInto('outbox')
      .values({ id: 'e1', instance_id: 'i', instance_name: 'i', event: 'MESSAGES_UPSERT', body: '{}', created_at: 1 })
      .execute();
    expect(await store.db.selectFrom('outbox').select('id').execute()).toEqual([{ id: 'e1' }]);
  });

  it('is a one-node store: a second store on a file in use is refused until the first is closed', async () => {
    const path = newPath();
    const first = await openStore(`file:${path}`);
    await expect(openStore(`file:${path}`)).rejects.toThrow(/^DATABASE_CONNECTION_URI: another Switchboard process is using the SQLite database at /);
    // The refused open changed nothing: the first store still writes.
    await first.db
      .insertInto('outbox')
      .values({ id: 'e1', instance_id: 'i', instance_name: 'i', event: 'MESSAGES_UPSERT', body: '{}', created_at: 1 })
      .execute();
    await first.close();
    const second = await open(path);
    expect(await second.db.selectFrom('outbox').select('id').execute()).toEqual([{ id: 'e1' }]);
  });
});
