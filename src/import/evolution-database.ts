// Evolution's database, opened read-only in one transaction: PostgreSQL or MySQL/MariaDB behind one small interface.
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
