// The tests' PostgreSQL: where it is, whether it answers, one-shot queries and scratch schemas to create and drop.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { problemOf, serviceAvailable } from './required-services.js';

export const pgUrl = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Runs one statement on a connection of its own and answers its rows. */
export async function pgQuery<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Whether PostgreSQL answers a query; when not, a loud skip of `skipped` (a failure under REQUIRE_SERVICES=1). */
export async function postgresAvailable(skipped: string): Promise<boolean> {
  const problem = await problemOf(async () => {
    const client = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('select 1');
    } finally {
      await client.end().catch(() => undefined);
    }
  });
  return serviceAvailable('PostgreSQL', pgUrl, problem, skipped);
}

/** Removes a test's PostgreSQL schema and everything in it. */
export async function dropPostgresSchema(schema: string): Promise<void> {
  await pgQuery(`drop schema if exists ${schema} cascade`);
}

export interface ScratchSchema {
  schema: string;
  /** The connection URL with the schema as its search path (what a service started as a child process is given). */
  uri: string;
  drop(): Promise<void>;
}

/** A new, empty schema for a service that is only given a connection URL. */
export async function scratchSchema(): Promise<ScratchSchema> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  await pgQuery(`create schema ${schema}`);
  const url = new URL(pgUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { schema, uri: url.toString(), drop: () => dropPostgresSchema(schema) };
}
