// A PostgreSQL store looks at its own schema only when it migrates: tables of other schemas (other stores, other test
// runs being dropped meanwhile) are neither read nor in its way.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../src/platform/store/db.js';
import { dropPostgresSchema, pgQuery, pgUrl, postgresAvailable } from '../../support/postgres.js';

const available = await postgresAvailable('the PostgreSQL introspection test is');

describe.skipIf(!available)('PostgreSQL introspection of one schema', () => {
  const schemas = [0, 1].map(() => `t_${randomBytes(6).toString('hex')}`);
  const stores: Store[] = [];
  afterAll(async () => {
    for (const store of stores) await store.close();
    for (const schema of schemas) await dropPostgresSchema(schema);
  });

  it("sees exactly the store's own tables, and migrates while another schema is dropped", async () => {
    stores.push(await openStore(pgUrl, { schema: schemas[0] }));
    await pgQuery(`create schema ${schemas[1]}`);
    await pgQuery(`create table ${schemas[1]}.stranger (id int)`);
    const tables = await stores[0].db.introspection.getTables();
    const names = tables.map((table) => table.name);
    expect(new Set(tables.map((table) => table.schema))).toEqual(new Set([schemas[0]]));
    expect(names).toEqual(expect.arrayContaining(['instances', 'messages', 'send_queue', 'outbox', 'kysely_migration']));
    expect(names).not.toContain('stranger');
    // A second open of the same schema finds every migration applied (and nothing of the other schema in its way).
    const [reopened] = await Promise.all([openStore(pgUrl, { schema: schemas[0] }), pgQuery(`drop schema ${schemas[1]} cascade`)]);
    stores.push(reopened);
    expect(await reopened.db.introspection.getTables()).toHaveLength(tables.length);
  });
});
