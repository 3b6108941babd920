// Evolution's MySQL or MariaDB database read in one read-only transaction over a consistent snapshot.
import mysql from 'mysql2/promise';
import { safeDatabaseAddress, type EvolutionDatabase } from './evolution-database.js';
import { ImportProblem, reasonOf } from './problem.js';

/** Identifiers in double quotes as MySQL's back-quoted ones (the statements are the import's own: no string literal holds a quote). */
function backQuoted(sql: string): string {
  return sql.replace(/"/g, '`');
}

export async function openMysqlEvolution(url: URL): Promise<EvolutionDatabase> {
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  const address = safeDatabaseAddress(url);
  if (!database) throw new ImportProblem(`--from must name Evolution's database (mysql://user:password@host:3306/<database>)`);
  let connection: mysql.Connection;
  try {
    connection = await mysql.createConnection({
      host: url.hostname,
      port: url.port ? Number(url.port) : 3306,
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database,
      // Timestamps as Date objects in UTC, big numbers exact, JSON columns as the server sends them.
      timezone: 'Z',
      supportBigNumbers: true,
      bigNumberStrings: false,
    });
  } catch (error) {
    throw new ImportProblem(`cannot connect to Evolution's MySQL at ${address}: ${reasonOf(error)}`);
  }
  await connection.query('set session transaction isolation level repeatable read');
  await connection.query('start transaction with consistent snapshot, read only');
  return {
    dialect: 'mysql',
    address,
    async tables() {
      const [rows] = await connection.query(
        "select table_name as table_name from information_schema.tables where table_schema = database() and table_type = 'BASE TABLE'",
      );
      return new Set((rows as { table_name: string }[]).map((r) => r.table_name));
    },
    async select(sql, params = []) {
      const [rows] = await connection.query(backQuoted(sql), [...params]);
      return rows as Record<string, unknown>[];
    },
    async close() {
      await connection.query('rollback').catch(() => undefined);
      await connection.end();
    },
  };
}
