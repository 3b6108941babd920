// Evolution's PostgreSQL database read in one read-only, repeatable-read transaction (Prisma's ?schema= honoured).
import pg from 'pg';
import { safeDatabaseAddress, type EvolutionDatabase } from './evolution-database.js';
import { ImportProblem, reasonOf } from './problem.js';

/** Query parameters of Prisma's connection strings that the pg driver does not take. */
const prismaOnly = ['schema', 'connection_limit', 'pool_timeout', 'pgbouncer', 'socket_timeout', 'statement_cache_size', 'connect_timeout'];

/** `?` placeholders as PostgreSQL's `$1`, `$2`… */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

export async function openPostgresEvolution(url: URL): Promise<EvolutionDatabase> {
  // Evolution's .env names the schema the Prisma way (?schema=evolution_api); "public" when absent.
  const schema = url.searchParams.get('schema') ?? 'public';
  const clean = new URL(url.toString());
  for (const name of prismaOnly) clean.searchParams.delete(name);
  const client = new pg.Client({ connectionString: clean.toString() });
  const address = safeDatabaseAddress(url);
  try {
    await client.connect();
  } catch (error) {
    throw new ImportProblem(`cannot connect to Evolution's PostgreSQL at ${address}: ${reasonOf(error)}`);
  }
  await client.query('select set_config($1, $2, false)', ['search_path', pg.escapeIdentifier(schema)]);
  // One snapshot for the whole import, and a transaction that cannot write.
  await client.query('begin transaction isolation level repeatable read read only');
  return {
    dialect: 'postgres',
    address: `${address} (schema ${schema})`,
    async tables() {
      const rows = await client.query<{ table_name: string }>(
        "select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'",
      );
      return new Set(rows.rows.map((r) => r.table_name));
    },
    async select(sql, params = []) {
      return (await client.query(numbered(sql), [...params])).rows as Record<string, unknown>[];
    },
    async close() {
      await client.query('rollback').catch(() => undefined);
      await client.end();
    },
  };
}
