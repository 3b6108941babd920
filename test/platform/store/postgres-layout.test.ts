// PostgreSQL page layout: messages and send_queue keep room in their pages, so the send worker's updates are HOT.
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { storeTargets, suiteStore } from '../../support/harness.js';
import type { Store } from '../../../src/platform/store/db.js';

const postgres = (await storeTargets()).find((t) => t.name === 'postgres')!;

/** Inserts `count` outgoing messages of about 400 bytes each (about 16 to an 8 KiB page) and answers their ids. */
async function fillMessages(store: Store, instanceId: string, count: number): Promise<string[]> {
  const now = Date.now();
  const rows = Array.from({ length: count }, (_, i) => ({
    id: `m-${instanceId}-${String(i).padStart(5, '0')}`,
    instance_id: instanceId,
    key_id: `K${String(i).padStart(19, '0')}`,
    remote_jid: '5511988887777@s.whatsapp.net',
    from_me: 1,
    participant: null,
    push_name: null,
    message_type: 'conversation',
    content: JSON.stringify({ conversation: 'x'.repeat(300) }),
    status: 'PENDING',
    message_timestamp: Math.floor(now / 1000),
    source: 'web',
    idempotency_key: null,
    request_hash: null,
    created_at: now + i,
    updated_at: now + i,
  }));
  await store.db.insertInto('messages').values(rows).execute();
  return rows.map((r) => r.id);
}

/** Block number of a row's current version. */
async function pageOf(store: Store, table: 'messages' | 'send_queue', where: string, value: string | number): Promise<number> {
  const result = await sql<{ ctid: string }>`select ctid::text as ctid from ${sql.table(table)} where ${sql.ref(where)} = ${value}`.execute(store.db);
  return Number(/^\((\d+),/.exec(result.rows[0].ctid)![1]);
}

describe.skipIf(!postgres.available)('PostgreSQL page layout', () => {
  const store = suiteStore(postgres);

  it('keeps 20 % of each messages page and 30 % of each send_queue page free (fillfactor)', async () => {
    const result = await sql<{ relname: string; reloptions: string[] | null }>`
      select c.relname, c.reloptions from pg_class c
      where c.relnamespace = current_schema()::regnamespace and c.relname in ('messages', 'send_queue')
      order by c.relname
    `.execute(store().db);
    expect(result.rows).toEqual([
      { relname: 'messages', reloptions: ['fillfactor=80'] },
      { relname: 'send_queue', reloptions: ['fillfactor=70'] },
    ]);
  });

  it("updates a message's status in place (HOT) on a full page, adding no index entries", async () => {
    const ids = await fillMessages(store(), 'layout-a', 200);
    const first = ids[0];
    const pageBefore = await pageOf(store(), 'messages', 'id', first);
    // The first page is full to its fill factor: without the room left, the new version would go to another page.
    const hot = await store()
      .db.transaction()
      .execute(async (tx) => {
        await tx.updateTable('messages').set({ status: 'SERVER_ACK', updated_at: Date.now() }).where('id', '=', first).execute();
        const counted = await sql<{ hot: string }>`select pg_stat_get_xact_tuples_hot_updated('messages'::regclass)::text as hot`.execute(tx);
        return Number(counted.rows[0].hot);
      });
    expect(hot).toBe(1);
    expect(await pageOf(store(), 'messages', 'id', first)).toBe(pageBefore);
    const stored = await store().db.selectFrom('messages').select('status').where('id', '=', first).executeTakeFirstOrThrow();
    expect(stored.status).toBe('SERVER_ACK');
  });

  it("counts a queued send's attempt in place (HOT) on a full page", async () => {
    const now = Date.now();
    const rows = Array.from({ length: 300 }, (_, i) => ({
      instance_id: 'layout-b',
      message_id: `q-${i}`,
      chat_jid: '5511988887777@s.whatsapp.net',
      payload: JSON.stringify({ outbound: { remoteJid: '5511988887777@s.whatsapp.net', pad: 'y'.repeat(150) }, delay: 0 }),
      state: 'pending',
      attempts: 0,
      next_attempt_at: now,
      expires_at: now + 86_400_000,
      last_error: null,
      created_at: now,
    }));
    await store().db.insertInto('send_queue').values(rows).execute();
    const head = await store().db.selectFrom('send_queue').select('seq').where('message_id', '=', 'q-0').executeTakeFirstOrThrow();
    const hot = await store()
      .db.transaction()
      .execute(async (tx) => {
        await tx.updateTable('send_queue').set({ attempts: 1 }).where('seq', '=', head.seq).execute();
        const counted = await sql<{ hot: string }>`select pg_stat_get_xact_tuples_hot_updated('send_queue'::regclass)::text as hot`.execute(tx);
        return Number(counted.rows[0].hot);
      });
    expect(hot).toBe(1);
    const stored = await store().db.selectFrom('send_queue').select('attempts').where('seq', '=', head.seq).executeTakeFirstOrThrow();
    expect(stored.attempts).toBe(1);
  });
});
