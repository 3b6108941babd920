// `?schema=` in the PostgreSQL URI, as Evolution users write it: the schema is created, migrated and used by every
// query (both URI spellings, several nodes starting at once, a second start, the real service as a child process).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/platform/store/db.js';
import { loadConfig, ConfigError } from '../../../src/platform/config.js';
import { readPostgresUri } from '../../../src/platform/store/pg-uri.js';
import { dropPostgresSchema, pgQuery, pgUrl, postgresAvailable } from '../../support/postgres.js';
import { killService, serviceSetup, startService, waitUntilUp } from '../../support/service-process.js';

const pgUp = await postgresAvailable('the ?schema= suites are');
const made: string[] = [];

/** A schema name of this run (dropped after the file) and the test URL with `?schema=` in the given spelling. */
function uriWithSchema(spelling: 'postgres' | 'postgresql' = 'postgres') {
  const schema = `t_uri_${randomBytes(5).toString('hex')}`;
  made.push(schema);
  const url = new URL(pgUrl.replace(/^postgres(ql)?:/, `${spelling}:`));
  url.searchParams.set('schema', schema);
  return { schema, uri: url.toString() };
}

async function tablesOf(schema: string): Promise<string[]> {
  const rows = await pgQuery<{ name: string }>('select table_name as name from information_schema.tables where table_schema = $1 order by 1', [schema]);
  return rows.map((r) => r.name);
}

afterAll(async () => {
  for (const schema of made) await dropPostgresSchema(schema);
});

describe('the schema parameter of the URI', () => {
  it('is taken out of what pg is given, with the other parameters kept', () => {
    const parsed = readPostgresUri('postgresql://u:p@db.example:6543/evo?sslmode=disable&schema=evolution_api');
    expect(parsed.schema).toBe('evolution_api');
    expect(parsed.connectionString).toBe('postgresql://u:p@db.example:6543/evo?sslmode=disable');
    expect(parsed.address).toBe('db.example:6543');
  });

  it('refuses a name that is not a plain identifier as a configuration error naming DATABASE_CONNECTION_URI', async () => {
    const env = { DATABASE_CONNECTION_URI: 'postgres://u@h/db?schema=evo;drop' };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(/DATABASE_CONNECTION_URI has schema="evo;drop", which is not a plain schema name/);
    await expect(openStore(env.DATABASE_CONNECTION_URI)).rejects.toThrow(/^DATABASE_CONNECTION_URI: has schema="evo;drop"/);
  });
});

describe.skipIf(!pgUp)('a store opened with ?schema= on PostgreSQL', () => {
  it.each(['postgres', 'postgresql'] as const)('creates the schema and keeps every table there, none in public (%s://)', async (spelling) => {
    const { schema, uri } = uriWithSchema(spelling);
    const store = await openStore(uri);
    try {
      const tables = await tablesOf(schema);
      expect(tables).toEqual(expect.arrayContaining(['instances', 'messages', 'outbox', 'kysely_migration', 'kysely_migration_lock']));
      const inPublic = await pgQuery<{ instances: string | null; migrations: string | null }>(
        "select to_regclass('public.instances')::text as instances, to_regclass('public.kysely_migration')::text as migrations",
      );
      expect(inPublic).toEqual([{ instances: null, migrations: null }]);
      const path = await sql<{ path: string }>`select current_setting('search_path') as path`.execute(store.db);
      expect(path.rows[0]?.path).toBe(schema);
      await store.db
        .insertInto('outbox')
        .values({ id: 'e-1', instance_id: 'i', instance_name: 'uri-schema', event: 'MESSAGES_UPSERT', body: '{}', created_at: Date.now() })
        .execute();
      const stored = await pgQuery<{ name: string }>(`select instance_name as name from ${schema}.outbox`);
      expect(stored).toEqual([{ name: 'uri-schema' }]);
    } finally {
      await store.close();
    }
  });

  it('finds the schema migrated on the next start, with its rows', async () => {
    const { schema, uri } = uriWithSchema();
    const first = await openStore(uri);
    await first.db
      .insertInto('outbox')
      .values({ id: 'e-1', instance_id: 'i', instance_name: 'again', event: 'MESSAGES_UPSERT', body: '{}', created_at: Date.now() })
      .execute();
    await first.close();
    const migrations = await pgQuery<{ n: string }>(`select count(*)::text as n from ${schema}.kysely_migration`);
    const second = await openStore(uri);
    try {
      expect(await pgQuery<{ n: string }>(`select count(*)::text as n from ${schema}.kysely_migration`)).toEqual(migrations);
      const names = await second.db.selectFrom('outbox').select('instance_name').execute();
      expect(names).toEqual([{ instance_name: 'again' }]);
    } finally {
      await second.close();
    }
  });

  it('lets several nodes start on a new schema at the same moment', async () => {
    const { schema, uri } = uriWithSchema();
    const stores = await Promise.all([openStore(uri), openStore(uri), openStore(uri)]);
    try {
      expect(await tablesOf(schema)).toContain('instances');
      for (const store of stores) await store.ping();
    } finally {
      for (const store of stores) await store.close();
    }
  });

  it('runs the real service there: it answers and stores in the schema', async () => {
    const { schema, uri } = uriWithSchema('postgresql');
    const dir = mkdtempSync(join(tmpdir(), 'sb-uri-schema-'));
    const { base, env, api } = await serviceSetup(join(dir, 'data'), uri);
    const service = startService(env);
    try {
      await waitUntilUp(base, service);
      const created = await api('POST', 'instance/create', { instanceName: 'schema-svc', integration: 'SANDBOX' });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const fetched = await api('GET', 'instance/fetchInstances?instanceName=schema-svc');
      expect(fetched.status).toBe(200);
      expect(await pgQuery<{ name: string }>(`select name from ${schema}.instances`)).toEqual([{ name: 'schema-svc' }]);
      expect(await pgQuery<{ t: string | null }>("select to_regclass('public.instances')::text as t")).toEqual([{ t: null }]);
    } finally {
      await killService(service);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
