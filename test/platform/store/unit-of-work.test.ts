// Units of work on both stores: queued rows written together, atomically, however many there are.
import { describe, expect, it } from 'vitest';
import { storeTargets, suiteStore } from '../../support/harness.js';
import { inInsertUnit, inUnit } from '../../../src/platform/store/unit.js';
import { inWriteUnit } from '../../../src/platform/store/write-unit.js';
import { GroupCommit } from '../../../src/platform/store/group-commit.js';

const targets = await storeTargets();

function outboxRow(i: number, instance: string) {
  return { id: `evt-${instance}-${i}`, instance_id: instance, instance_name: instance, event: 'MESSAGES_UPSERT', body: `{"n":${i}}`, created_at: i };
}

function queueRow(i: number, instance: string) {
  return {
    instance_id: instance,
    message_id: `msg-${instance}-${i}`,
    chat_jid: '5511900000000@s.whatsapp.net',
    payload: '{}',
    state: 'pending',
    attempts: 0,
    next_attempt_at: i,
    expires_at: i,
    last_error: null,
    created_at: i,
  };
}

describe.each(targets)('units of work on $name', (target) => {
  describe.skipIf(!target.available)('writes', () => {
    const store = suiteStore(target);

    const count = async (table: 'outbox' | 'send_queue', instance: string) =>
      Number(
        (
          await store()
            .db.selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .where('instance_id', '=', instance)
            .executeTakeFirstOrThrow()
        ).n,
      );

    it('writes rows of several tables from an insert-only unit, more parameters than one PostgreSQL statement takes', async () => {
      // 5,000 outbox rows (6 values) and 5,000 queue rows (10 values): 80,000 parameters.
      await inInsertUnit(store().db, async (unit) => {
        for (let i = 0; i < 5000; i++) {
          unit.insert('outbox', outboxRow(i, 'big'));
          unit.insert('send_queue', queueRow(i, 'big'));
        }
      });
      expect(await count('outbox', 'big')).toBe(5000);
      expect(await count('send_queue', 'big')).toBe(5000);
    });

    it('writes nothing of an insert-only unit whose rows break a constraint, and runs no after-commit hook', async () => {
      let hooked = false;
      await expect(
        inInsertUnit(store().db, async (unit) => {
          unit.insert('send_queue', queueRow(1, 'atomic'));
          unit.insert('outbox', outboxRow(1, 'atomic'));
          unit.insert('outbox', outboxRow(1, 'atomic')); // same event id twice: unique violation
          unit.afterCommit(() => (hooked = true));
        }),
      ).rejects.toThrow();
      expect(await count('send_queue', 'atomic')).toBe(0);
      expect(await count('outbox', 'atomic')).toBe(0);
      expect(hooked).toBe(false);
    });

    it('flushes queued rows of a transaction unit together with its own queries, all or nothing', async () => {
      await expect(
        inUnit(store().db, async (unit) => {
          unit.insert('outbox', outboxRow(1, 'tx'));
          unit.insert('send_queue', queueRow(1, 'tx'));
          await unit.flush();
          // Visible inside the transaction after the flush...
          expect(
            Number(
              (
                await unit.tx
                  .selectFrom('outbox')
                  .select((eb) => eb.fn.countAll().as('n'))
                  .where('instance_id', '=', 'tx')
                  .executeTakeFirstOrThrow()
              ).n,
            ),
          ).toBe(1);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      // ...and gone with the rollback.
      expect(await count('outbox', 'tx')).toBe(0);
      expect(await count('send_queue', 'tx')).toBe(0);
    });

    /** outbox rows 0..n-1 of `instance` and two queue rows, written before a write unit works on them. */
    async function seed(instance: string, n: number): Promise<string[]> {
      await inInsertUnit(store().db, async (unit) => {
        for (let i = 0; i < n; i++) unit.insert('outbox', outboxRow(i, instance));
        unit.insert('send_queue', queueRow(1, instance));
        unit.insert('send_queue', queueRow(2, instance));
      });
      return Array.from({ length: n }, (_, i) => `evt-${instance}-${i}`);
    }

    const statusRows = async (instance: string) =>
      (await store().db.selectFrom('message_status').select('message_id').where('instance_id', '=', instance).orderBy('message_id').execute()).map(
        (r) => r.message_id,
      );

    it('write unit: its statements and rows are written, guarded rows and hooks only where the guard answered', async () => {
      const ids = await seed('guard', 3);
      const hooks: string[] = [];
      const db = store().db;
      const answered = await inWriteUnit(db, (unit) => {
        unit.write(db.deleteFrom('send_queue').where('instance_id', '=', 'guard'));
        // Moves events 0 and 1 only (created_at 0 and 1), as a status UPDATE moves only messages still PENDING.
        unit.guardBy(db.updateTable('outbox').set({ body: '{"moved":true}' }).where('id', 'in', ids).where('created_at', '<', 2).returning('id'));
        for (const id of [ids[0]!, ids[2]!]) {
          const sink = unit.guarded(id);
          sink.insert('message_status', { message_id: id, instance_id: 'guard', status: 'SERVER_ACK', detail: null, at: 5 });
          sink.afterCommit(() => hooks.push(id));
        }
        unit.insert('outbox', outboxRow(10, 'guard'));
        unit.afterCommit(() => hooks.push('always'));
      });
      expect([...answered].sort()).toEqual([ids[0], ids[1]]);
      expect(await count('send_queue', 'guard')).toBe(0);
      expect(await count('outbox', 'guard')).toBe(4);
      const bodies = await db.selectFrom('outbox').select(['id', 'body']).where('instance_id', '=', 'guard').orderBy('seq').execute();
      expect(bodies.map((b) => b.body)).toEqual(['{"moved":true}', '{"moved":true}', '{"n":2}', '{"n":10}']);
      expect(await statusRows('guard')).toEqual([ids[0]]);
      expect(hooks.sort()).toEqual(['always', ids[0]].sort());
    });

    it('write unit: guarded rows of several inserts each (hundreds), typed right on both stores', async () => {
      const ids = await seed('many', 450);
      const answered = await inWriteUnit(store().db, (unit) => {
        unit.guardBy(store().db.updateTable('outbox').set({ created_at: 7 }).where('instance_id', '=', 'many').where('created_at', '>=', 50).returning('id'));
        for (const id of ids) {
          const sink = unit.guarded(id);
          // A null, a bigint and text columns: the first row's casts type them all.
          sink.insert('message_status', { message_id: id, instance_id: 'many', status: 'READ', detail: null, at: 1_790_000_000_000 });
          sink.insert('outbox', { id: `${id}-update`, instance_id: 'many-events', instance_name: 'many', event: 'MESSAGES_UPDATE', body: '{}', created_at: 1 });
        }
      });
      expect(answered.size).toBe(400);
      expect((await statusRows('many')).length).toBe(400);
      expect(await count('outbox', 'many-events')).toBe(400);
      const at = await store().db.selectFrom('message_status').select('at').where('instance_id', '=', 'many').limit(1).executeTakeFirstOrThrow();
      expect(Number(at.at)).toBe(1_790_000_000_000);
    });

    // Text as users send it: quotes, backslashes (also the characters `\ud`), line breaks, emoji, other scripts.
    const awkwardTexts = ['say "hi" \\ back\\slash', 'literal \\ud83d is not an emoji', 'line\nbreak\ttab', '😀 👍🏽 ✓', 'Ünïcödé 日本語 عربى', "it's", ''];

    it('keeps every value as given through an insert-only unit: awkward text, big numbers, nulls, rows with fewer columns', async () => {
      await inInsertUnit(store().db, async (unit) => {
        awkwardTexts.forEach((text, i) => {
          unit.insert('outbox', { ...outboxRow(i, 'values'), body: text, created_at: 1_790_000_000_123 + i });
        });
        // A row without a column the others have: null there, as with any multi-row insert.
        unit.insert('message_status', { message_id: 'm1', instance_id: 'values', status: 'READ', detail: 'seen', at: 2 });
        unit.insert('message_status', { message_id: 'm2', instance_id: 'values', status: 'READ', at: 3 });
      });
      const bodies = await store().db.selectFrom('outbox').select(['body', 'created_at']).where('instance_id', '=', 'values').orderBy('seq').execute();
      expect(bodies.map((b) => b.body)).toEqual(awkwardTexts);
      expect(bodies.map((b) => Number(b.created_at))).toEqual(awkwardTexts.map((_, i) => 1_790_000_000_123 + i));
      const statuses = await store()
        .db.selectFrom('message_status')
        .select(['message_id', 'detail'])
        .where('instance_id', '=', 'values')
        .orderBy('message_id')
        .execute();
      expect(statuses).toEqual([
        { message_id: 'm1', detail: 'seen' },
        { message_id: 'm2', detail: null },
      ]);
    });

    it('stores binary values byte for byte, and text holding a lone UTF-16 surrogate with only that replaced', async () => {
      const bytes = Buffer.from([0, 1, 2, 0xfe, 0xff, 0x22, 0x5c]);
      await inInsertUnit(store().db, async (unit) => {
        unit.insert('media_blobs', { id: 'blob-1', instance_id: 'bytes', data: bytes, created_at: 1 });
        unit.insert('outbox', { ...outboxRow(0, 'bytes'), body: 'broken \ud83d emoji' });
        unit.insert('outbox', { ...outboxRow(1, 'bytes'), body: 'fine' });
      });
      const blob = await store().db.selectFrom('media_blobs').select('data').where('id', '=', 'blob-1').executeTakeFirstOrThrow();
      expect(Buffer.from(blob.data).equals(bytes)).toBe(true);
      const bodies = await store().db.selectFrom('outbox').select('body').where('instance_id', '=', 'bytes').orderBy('seq').execute();
      // Each driver encodes the stray half of an emoji as UTF-8 can (pg: one U+FFFD; better-sqlite3: three bytes read back as three).
      expect(bodies[0]?.body).toMatch(/^broken \ufffd+ emoji$/);
      expect(bodies[1]?.body).toBe('fine');
    });

    it('write unit: guarded rows keep awkward text and their pairing with their guard', async () => {
      const ids = await seed('gtext', 3);
      await inWriteUnit(store().db, (unit) => {
        unit.guardBy(store().db.updateTable('outbox').set({ created_at: 9 }).where('id', 'in', [ids[0]!, ids[2]!]).returning('id'));
        ids.forEach((id, i) => {
          unit.guarded(id).insert('message_status', { message_id: id, instance_id: 'gtext', status: 'READ', detail: awkwardTexts[i]!, at: i });
        });
      });
      const rows = await store()
        .db.selectFrom('message_status')
        .select(['message_id', 'detail', 'at'])
        .where('instance_id', '=', 'gtext')
        .orderBy('message_id')
        .execute();
      expect(rows.map((r) => ({ ...r, at: Number(r.at) }))).toEqual([
        { message_id: ids[0], detail: awkwardTexts[0], at: 0 },
        { message_id: ids[2], detail: awkwardTexts[2], at: 2 },
      ]);
    });

    it('write unit: all or nothing when a row breaks a constraint; rollback hooks run, commit hooks do not', async () => {
      const ids = await seed('wfail', 2);
      const hooks: string[] = [];
      await expect(
        inWriteUnit(store().db, (unit) => {
          unit.write(store().db.deleteFrom('send_queue').where('instance_id', '=', 'wfail'));
          unit.guardBy(store().db.updateTable('outbox').set({ body: 'changed' }).where('id', 'in', ids).returning('id'));
          const sink = unit.guarded(ids[0]!);
          sink.insert('message_status', { message_id: ids[0]!, instance_id: 'wfail', status: 'READ', detail: null, at: 1 });
          sink.afterCommit(() => hooks.push('guarded'));
          unit.insert('outbox', outboxRow(1, 'wfail')); // an event id that exists: unique violation
          unit.afterCommit(() => hooks.push('commit'));
          unit.onRollback(() => hooks.push('rollback'));
        }),
      ).rejects.toThrow();
      expect(await count('send_queue', 'wfail')).toBe(2);
      const bodies = await store().db.selectFrom('outbox').select('body').where('instance_id', '=', 'wfail').orderBy('seq').execute();
      expect(bodies.map((b) => b.body)).toEqual(['{"n":0}', '{"n":1}']);
      expect(await statusRows('wfail')).toEqual([]);
      expect(hooks).toEqual(['rollback']);
    });

    it('group commit: one bad unit fails alone, the others of its batch are committed in order', async () => {
      const commits = new GroupCommit(store().db, inInsertUnit);
      const results = await Promise.allSettled([
        commits.run((unit) => unit.insert('outbox', outboxRow(1, 'group'))),
        commits.run((unit) => unit.insert('outbox', outboxRow(1, 'group'))), // duplicate id
        commits.run((unit) => unit.insert('outbox', outboxRow(2, 'group'))),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      const rows = await store().db.selectFrom('outbox').select(['id']).where('instance_id', '=', 'group').orderBy('seq').execute();
      expect(rows.map((r) => r.id)).toEqual(['evt-group-1', 'evt-group-2']);
    });
  });
});
