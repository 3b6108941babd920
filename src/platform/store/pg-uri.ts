// The PostgreSQL connection URI as users write it: Evolution's `?schema=`, Prisma's `connection_limit` and pg's `options` taken out, the rest for pg.
import { StartupError } from '../startup-error.js';

/** A schema name used as it stands in statements and in `search_path`: lower-case letters, digits and `_`. */
const plainIdentifier = /^[a-z_][a-z0-9_]{0,62}$/;

export interface PostgresUri {
  /** What pg is given: the URI without `schema` and `options`. */
  connectionString: string;
  /** The `schema` parameter (Evolution's spelling), when given. */
  schema?: string;
  /** The `options` parameter (pg's session options), when given. */
  options?: string;
  /** The `connection_limit` parameter (Prisma's spelling, in Evolution's URIs): connections in the pool. */
  connectionLimit?: number;
  /** `host:port` for messages (never the user or password). */
  address: string;
  database: string;
  user: string;
}

/** Whether the URI names PostgreSQL (both spellings). */
export function isPostgresUri(uri: string): boolean {
  return uri.startsWith('postgres://') || uri.startsWith('postgresql://');
}

/** A query parameter of a PostgreSQL URI; null when absent, or when the text is not a URL (pg reports that itself). */
function parameterOf(uri: string, name: string): string | null {
  if (!isPostgresUri(uri)) return null;
  try {
    return new URL(uri).searchParams.get(name);
  } catch {
    return null;
  }
}

/** What is wrong with the URI's `schema` parameter, as the phrase after the setting's name; undefined when nothing. */
export function schemaProblem(uri: string): string | undefined {
  const schema = parameterOf(uri, 'schema');
  if (schema === null || plainIdentifier.test(schema)) return undefined;
  return `has schema=${JSON.stringify(schema)}, which is not a plain schema name (use lower-case letters, digits and _, not starting with a digit, at most 63 characters)`;
}

/** The URI's `connection_limit` (Prisma's spelling of the pool size, found in Evolution's URIs), when given. */
export function connectionLimitOf(uri: string): number | undefined {
  const limit = parameterOf(uri, 'connection_limit');
  return limit !== null && /^[1-9][0-9]{0,3}$/.test(limit) ? Number(limit) : undefined;
}

/** What is wrong with the URI's `connection_limit` parameter, as the phrase after the setting's name; undefined when nothing. */
export function connectionLimitProblem(uri: string): string | undefined {
  const limit = parameterOf(uri, 'connection_limit');
  if (limit === null || connectionLimitOf(uri) !== undefined) return undefined;
  return `has connection_limit=${JSON.stringify(limit)}, which is not a whole number from 1 to 9999 (the most connections this node opens; or set DATABASE_POOL_SIZE)`;
}

/** Splits the URI into what pg is given and the parts we apply ourselves; a bad schema name throws. */
export function readPostgresUri(uri: string): PostgresUri {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return { connectionString: uri, address: '(unreadable URI)', database: '', user: '' };
  }
  const problem = schemaProblem(uri);
  if (problem) throw new StartupError('DATABASE_CONNECTION_URI', problem);
  const schema = url.searchParams.get('schema') ?? undefined;
  const options = url.searchParams.get('options') ?? undefined;
  const connectionLimit = connectionLimitOf(uri);
  url.searchParams.delete('schema');
  url.searchParams.delete('options');
  url.searchParams.delete('connection_limit');
  const host = decodeURIComponent(url.hostname) || url.searchParams.get('host') || 'localhost';
  return {
    connectionString: url.toString(),
    ...(schema ? { schema } : {}),
    ...(options ? { options } : {}),
    ...(connectionLimit !== undefined ? { connectionLimit } : {}),
    address: `${host}:${url.port || '5432'}`,
    database: decodeURIComponent(url.pathname.slice(1)),
    user: decodeURIComponent(url.username),
  };
}

/** Whether a schema name can be used as it stands (tests' and callers' own `schema` option). */
export function isPlainIdentifier(name: string): boolean {
  return plainIdentifier.test(name);
}
