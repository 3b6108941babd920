// Many linked sandbox instances at once on PostgreSQL: copies of one created through the API, written in SQL with fresh
// ids, names, keys and numbers (its instance row, session and event settings), for restart tests and the fleet bench.
import { randomUUID } from 'node:crypto';
import { SecretsBox } from '../../src/platform/util/secrets-box.js';
import { generateApiKey, hashApiKey } from '../../src/platform/util/api-keys.js';

/** Runs one statement and answers its rows (a pg client's `query`, say). */
export type RunSql = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

export interface SandboxCopies {
  /** The instance copied: created and linked through the API. */
  templateId: string;
  /** The number it was linked with (digits): each copy gets its own in its place. */
  templateNumber: string;
  /** Names `${prefix}${i}` and numbers `${numberPrefix}` + i padded to the template number's length. */
  prefix: string;
  numberPrefix: string;
  count: number;
  /** The first copy's index (0 unless told). */
  start?: number;
  /** The service's SECRETS_KEY (base64): each copy's key is sealed with it. */
  secretsKey: string;
  /** Where the tables are (`schema.`), or '' for the search path. */
  schema?: string;
}

const rowsPerInsert = 1000;

/** Writes the copies; answers their names. The service must not run meanwhile (it reads them when it starts). */
export async function copySandboxInstance(run: RunSql, copies: SandboxCopies): Promise<string[]> {
  const table = (name: string) => `${copies.schema ?? ''}${name}`;
  const box = new SecretsBox(Buffer.from(copies.secretsKey, 'base64'));
  const [template] = await run(`select * from ${table('instances')} where id = $1`, [copies.templateId]);
  if (!template) throw new Error(`instance ${copies.templateId} not found`);
  const sessions = await run(`select * from ${table('sessions')} where instance_id = $1`, [copies.templateId]);
  const sinks = await run(`select * from ${table('event_sinks')} where instance_id = $1`, [copies.templateId]);
  const width = copies.templateNumber.length - copies.numberPrefix.length;
  const renumber = (value: unknown, number: string) => (typeof value === 'string' ? value.replaceAll(copies.templateNumber, number) : value);
  const names: string[] = [];
  const first = copies.start ?? 0;
  const end = first + copies.count;
  for (let start = first; start < end; start += rowsPerInsert) {
    const instances: Record<string, unknown>[] = [];
    const sessionRows: Record<string, unknown>[] = [];
    const sinkRows: Record<string, unknown>[] = [];
    for (let i = start; i < Math.min(end, start + rowsPerInsert); i++) {
      const id = randomUUID();
      const name = `${copies.prefix}${i}`;
      const number = `${copies.numberPrefix}${String(i).padStart(width, '0')}`;
      const key = generateApiKey();
      names.push(name);
      const copy: Record<string, unknown> = { ...template, id, name, apikey_hash: hashApiKey(key), apikey_sealed: box.seal(key) };
      for (const column of ['owner_jid', 'number', 'profile_name']) copy[column] = renumber(template[column], number);
      instances.push(copy);
      for (const session of sessions) sessionRows.push({ ...session, instance_id: id, data: renumber(session.data, number) });
      for (const sink of sinks) sinkRows.push({ ...sink, instance_id: id });
    }
    for (const [name, rows] of [
      ['instances', instances],
      ['sessions', sessionRows],
      ['event_sinks', sinkRows],
    ] as const) {
      if (rows.length === 0) continue;
      await run(`insert into ${table(name)} select * from jsonb_populate_recordset(null::${table(name)}, $1::jsonb)`, [JSON.stringify(rows)]);
    }
  }
  return names;
}
