// The PostgreSQL connection URI as users write it: Evolution's `?schema=` and pg's `options` taken out, the rest for pg.
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
  /** `host:port` for messages (never the user or password). */
  address: string;
  database: string;
  user: string;
}

/** Whether the URI names PostgreSQL (both spellings). */
export function isPostgresUri(uri: string): boolean {
  return uri.startsWith('postgres://') || uri.startsWith('postgresql://');
}

/** What is wrong with the URI's `schema` parameter, as the phrase after the setting's name; undefined when nothing. */
export function schemaProblem(uri: string): string | undefined {
  if (!isPostgresUri(uri)) return undefined;
  let schema: string | null;
  try {
    schema = new URL(uri).searchParams.get('schema');
  } catch {
    return undefined; // not a URL: pg reports its own error when connecting
  }
  if (schema === null || plainIdentifier.test(schema)) return undefined;
  return `has schema=${JSON.stringify(schema)}, which is not a plain schema name (use lower-case letters, digits and _, not starting with a digit, at most 63 characters)`;
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
  url.searchParams.delete('schema');
  url.searchParams.delete('options');
  const host = decodeURIComponent(url.hostname) || url.searchParams.get('host') || 'localhost';
  return {
    connectionString: url.toString(),
    ...(schema ? { schema } : {}),
    ...(options ? { options } : {}),
    address: `${host}:${url.port || '5432'}`,
    database: decodeURIComponent(url.pathname.slice(1)),
    user: decodeURIComponent(url.username),
  };
}

/** Whether a schema name can be used as it stands (tests' and callers' own `schema` option). */
export function isPlainIdentifier(name: string): boolean {
  return plainIdentifier.test(name);
}
