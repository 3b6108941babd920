// Evolution's database, opened read-only in one transaction: PostgreSQL or MySQL/MariaDB behind one small interface.
import { ImportProblem } from './problem.js';

export interface EvolutionDatabase {
  readonly dialect: 'postgres' | 'mysql';
  /** Where it is, without credentials, for the report. */
  readonly address: string;
  /** The names of the tables of Evolution's schema. */
  tables(): Promise<Set<string>>;
  /**
   * The rows of one SELECT, written with `?` placeholders and identifiers in double quotes (`"Instance"`): each
   * database rewrites them into its own form. Only the import's own statements go through here.
   */
  select(sql: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /** Ends the read transaction (nothing was written) and the connection. */
  close(): Promise<void>;
}

/** A connection address fit for a report: scheme, host, port and database, never the password. */
export function safeDatabaseAddress(url: URL): string {
  return `${url.protocol}//${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}`;
}

/** Opens Evolution's database from its connection URI (Evolution's DATABASE_CONNECTION_URI). */
export async function openEvolutionDatabase(uri: string): Promise<EvolutionDatabase> {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new ImportProblem("--from must be a postgresql:// or mysql:// URI (Evolution's DATABASE_CONNECTION_URI)");
  }
  if (url.protocol === 'postgres:' || url.protocol === 'postgresql:') {
    const { openPostgresEvolution } = await import('./postgres-database.js');
    return openPostgresEvolution(url);
  }
  if (url.protocol === 'mysql:' || url.protocol === 'mariadb:') {
    const { openMysqlEvolution } = await import('./mysql-database.js');
    return openMysqlEvolution(url);
  }
  throw new ImportProblem(`--from must be a postgresql:// or mysql:// URI (Evolution's DATABASE_CONNECTION_URI), not ${url.protocol}//…`);
}
