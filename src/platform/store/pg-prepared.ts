// PostgreSQL connections that prepare each SQL text once (named statements) instead of parsing and planning it anew.
import { createHash } from 'node:crypto';
import type pg from 'pg';

/** Distinct statements kept prepared per connection; beyond that, texts run unnamed (parsed each time). */
const maxPreparedPerConnection = 1_000;

/**
 * Makes `client.query(text, values)` (what Kysely calls) use a named prepared statement per SQL text, so the server
 * parses and plans each text once per connection. Transaction control and texts without parameters stay as they are.
 */
export function prepareStatements(client: pg.PoolClient): void {
  const prepared = new Set<string>();
  const original = client.query.bind(client) as (...args: unknown[]) => unknown;
  const patched = (...args: unknown[]): unknown => {
    const [text, values] = args;
    if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0 || args.length !== 2) return original(...args);
    const name = statementName(text);
    if (!prepared.has(name)) {
      if (prepared.size >= maxPreparedPerConnection) return original(...args);
      prepared.add(name);
    }
    return original({ name, text, values });
  };
  // node-pg's query is heavily overloaded; the patched function keeps its calling forms for everything but Kysely's.
  (client as unknown as { query: typeof patched }).query = patched;
}

/** Names by SQL text, shared by all connections (hashing every query's text showed in profiles). */
const names = new Map<string, string>();

function statementName(text: string): string {
  let name = names.get(text);
  if (!name) {
    name = `sb_${createHash('sha1').update(text).digest('base64url')}`;
    if (names.size >= maxPreparedPerConnection) names.clear();
    names.set(text, name);
  }
  return name;
}
