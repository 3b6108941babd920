// How the store's connections are set up: SQLite's WAL kept short under steady writes, PostgreSQL session settings.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openStore, type Store } from '../../../src/platform/store/db.js';
import { inInsertUnit } from '../../../src/platform/store/unit.js';
import { storeTargets } from '../../support/harness.js';
import { dropPostgresSchema, pgUrl } from '../../support/postgres.js';

const targets = await storeTargets();
const postgres = targets.find((t) => t.name === 'postgres');

describe('SQLite write-ahead log', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-wal-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('copies steady writes into the database file within a fraction of a second, off the event loop', async () => {
    const path = join(dir, 'wal.db');
    const store = await openStore(`file:${path}`);
    try {
      const before = statSync(path).size;
      const body = 'x'.repeat(2000);
      let written = 0;
      let commits = 0;
      // About 0.7 s of small commits, as a busy service makes them: 20 rows of 2 KB each, a commit per millisecond.
      const started = Date.now();
      for (let commit = 0; Date.now() - started < 700; commit++, commits++) {
        await inInsertUnit(store.db, async (unit) => {
          for (let row = 0; row < 20; row++) {
            unit.insert('outbox', { id: `e-${commit}-${row}`, instance_id: 'i', instance_name: 'i', event: 'MESSAGES_UPSERT', body, created_at: commit });
          }
        });
        written += 20 * body.length;
        await sleep(1);
      }
      expect(written).toBeGreaterThan(5_000_000);
      // Checkpoints once a second would not have copied anything yet; paced ones trail by a few tens of ms.
      expect(statSync(path).size - before).toBeGreaterThan(written / 2);
      const rows = await store.db
        .selectFrom('outbox')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      expect(Number(rows.n)).toBe(commits * 20);
    } finally {
      await store.close();
    }
  }, 30_000);
});

describe.skipIf(!postgres?.available)('PostgreSQL sessions', () => {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  let store: Store | undefined;
  afterAll(async () => {
    await store?.close();
    await dropPostgresSchema(schema);
  });

  it('plan each prepared statement for its values, and keep the options given in the URI', async () => {
    const separator = pgUrl.includes('?') ? '&' : '?';
    store = await openStore(`${pgUrl}${separator}options=${encodeURIComponent('-c statement_timeout=54321')}`, { schema });
    const show = async (name: string) => {
      const result = await sql<Record<string, string>>`select current_setting(${name}) as value`.execute(store!.db);
      return result.rows[0]?.value;
    };
    expect(await show('plan_cache_mode')).toBe('force_custom_plan');
    expect(await show('statement_timeout')).toBe('54321ms');
    expect(await show('search_path')).toBe(schema);
  });
});
