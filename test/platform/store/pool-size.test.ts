// How many PostgreSQL connections a node opens: DATABASE_POOL_SIZE, or an Evolution URI's `connection_limit` (Prisma's
// spelling); the pool keeps to it, and the real service works on a pool of two (sends delivered between two instances).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/platform/store/db.js';
import { ConfigError, loadConfig } from '../../../src/platform/config.js';
import { readPostgresUri } from '../../../src/platform/store/pg-uri.js';
import { dropPostgresSchema, pgQuery, pgUrl, postgresAvailable } from '../../support/postgres.js';
import { killService, linkSandbox, serviceSetup, startService, waitUntilUp } from '../../support/service-process.js';
import { waitFor } from '../../support/wait.js';

const pgUp = await postgresAvailable('the pool size suites are');
const made: string[] = [];

/** The test URL in a schema of this run (dropped after the file), with `extra` query parameters. */
function scratchUri(extra: Record<string, string> = {}): string {
  const schema = `t_pool_${randomBytes(5).toString('hex')}`;
  made.push(schema);
  const url = new URL(pgUrl);
  url.searchParams.set('schema', schema);
  for (const [name, value] of Object.entries(extra)) url.searchParams.set(name, value);
  return url.toString();
}

afterAll(async () => {
  for (const schema of made) await dropPostgresSchema(schema);
});

describe('the pool size setting', () => {
  it('is 10 unless told otherwise', () => {
    expect(loadConfig({}).databasePoolSize).toBe(10);
    expect(loadConfig({ DATABASE_CONNECTION_URI: 'postgres://u@h/db' }).databasePoolSize).toBe(10);
  });

  it("reads an Evolution URI's connection_limit, and DATABASE_POOL_SIZE wins over it", () => {
    const uri = 'postgresql://u:p@db.example:5432/evo?schema=evolution_api&connection_limit=25&sslmode=disable';
    expect(loadConfig({ DATABASE_CONNECTION_URI: uri }).databasePoolSize).toBe(25);
    expect(loadConfig({ DATABASE_CONNECTION_URI: uri, DATABASE_POOL_SIZE: '7' }).databasePoolSize).toBe(7);
    // A pool of one would leave no connection while a transaction holds the other: two at least.
    expect(loadConfig({ DATABASE_CONNECTION_URI: 'postgres://u@h/db?connection_limit=1' }).databasePoolSize).toBe(2);
  });

  it('takes connection_limit out of what pg is given', () => {
    const parsed = readPostgresUri('postgresql://u:p@db.example:5432/evo?connection_limit=25&sslmode=disable');
    expect(parsed.connectionLimit).toBe(25);
    expect(parsed.connectionString).toBe('postgresql://u:p@db.example:5432/evo?sslmode=disable');
  });

  it('refuses a pool size or connection_limit that is not a usable number, saying what to write', () => {
    expect(() => loadConfig({ DATABASE_POOL_SIZE: '1' })).toThrow(/DATABASE_POOL_SIZE must be a whole number from 2 to 1000 \(got "1"\)/);
    expect(() => loadConfig({ DATABASE_POOL_SIZE: 'lots' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_CONNECTION_URI: 'postgres://u@h/db?connection_limit=ten' })).toThrow(
      /DATABASE_CONNECTION_URI has connection_limit="ten", which is not a whole number from 1 to 9999/,
    );
    expect(() => loadConfig({ DATABASE_CONNECTION_URI: 'postgres://u@h/db?connection_limit=0' })).toThrow(/connection_limit="0"/);
  });
});

describe.skipIf(!pgUp)('the pool on PostgreSQL', () => {
  it('never opens more connections than its size: queries beyond it wait their turn', async () => {
    const store = await openStore(scratchUri(), { poolSize: 3 });
    try {
      const startedAt = Date.now();
      const backends = await Promise.all(
        Array.from({ length: 9 }, async () => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.15)`.execute(store.db);
          return rows[0].pid;
        }),
      );
      expect(new Set(backends).size).toBe(3);
      // Nine queries of 0.15 s on three connections: three rounds.
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(400);
    } finally {
      await store.close();
    }
  });

  it('is enough at two for the real service: sends between two instances are delivered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-pool-size-'));
    // The Evolution spelling in the URI, as a user moving over would have it; the connections named to be counted.
    const application = `sb_pool_${randomBytes(4).toString('hex')}`;
    const { base, env, api } = await serviceSetup(join(dir, 'data'), scratchUri({ connection_limit: '2', application_name: application }));
    const service = startService(env);
    try {
      await waitUntilUp(base, service);
      const alice = await linkSandbox(api, 'pool-alice', '5511900000101');
      await linkSandbox(api, 'pool-bob', '5511900000102');
      const counts: number[] = [];
      const sampling = setInterval(() => {
        void pgQuery<{ n: number }>('select count(*)::int as n from pg_stat_activity where application_name = $1', [application]).then(
          ([row]) => counts.push(row.n),
          () => undefined,
        );
      }, 20);
      const sends = await Promise.all(
        Array.from({ length: 20 }, (_, i) => api('POST', `message/sendText/${alice.name}`, { number: '5511900000102', text: `pool ${i}` })),
      ).finally(() => clearInterval(sampling));
      expect(sends.map((send) => send.status)).toEqual(Array(20).fill(201));
      await waitFor(
        async () => {
          const found = await api('POST', 'chat/findMessages/pool-bob', { where: { key: { fromMe: false } } });
          return found.status === 200 && found.body.messages.total === 20;
        },
        30_000,
        { what: () => 'pool-bob to have received the 20 messages' },
      );
      const statuses = await api('POST', `chat/findMessages/${alice.name}`, { where: { key: { fromMe: true } } });
      expect(statuses.body.messages.records.map((r: { status: string }) => r.status)).not.toContain('PENDING');
      // Two in the pool and the one that listens for signals.
      expect(counts.length).toBeGreaterThan(0);
      expect(Math.max(...counts)).toBeLessThanOrEqual(3);
      expect(Math.max(...counts)).toBeGreaterThanOrEqual(2);
    } finally {
      await killService(service);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
