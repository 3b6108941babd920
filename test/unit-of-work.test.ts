// Units of work on both stores: queued rows written together, atomically, however many there are.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeTargets } from './harness.js';
import type { Store } from '../src/store/db.js';
import { inInsertUnit, inUnit } from '../src/store/unit.js';
import { GroupCommit } from '../src/store/group-commit.js';

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
    let store: Store;
    let dispose: () => Promise<void>;

    beforeAll(async () => {
      const opened = await target.open();
      store = opened.store;
      dispose = async () => {
        await store.close();
        await opened.dispose();
      };
    });
    afterAll(async () => dispose?.());

    const count = async (table: 'outbox' | 'send_queue', instance: string) =>
      Number((await store.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where('instance_id', '=', instance).executeTakeFirstOrThrow()).n);

    it('writes rows of several tables from an insert-only unit, more parameters than one PostgreSQL statement takes', async () => {
      // 5,000 outbox rows (6 values) and 5,000 queue rows (10 values): 80,000 parameters.
      await inInsertUnit(store.db, async (unit) => {
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
        inInsertUnit(store.db, async (unit) => {
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
        inUnit(store.db, async (unit) => {
          unit.insert('outbox', outboxRow(1, 'tx'));
          unit.insert('send_queue', queueRow(1, 'tx'));
          await unit.flush();
          // Visible inside the transaction after the flush...
          expect(Number((await unit.tx.selectFrom('outbox').select((eb) => eb.fn.countAll().as('n')).where('instance_id', '=', 'tx').executeTakeFirstOrThrow()).n)).toBe(1);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      // ...and gone with the rollback.
      expect(await count('outbox', 'tx')).toBe(0);
      expect(await count('send_queue', 'tx')).toBe(0);
    });

    it('group commit: one bad unit fails alone, the others of its batch are committed in order', async () => {
      const commits = new GroupCommit(store.db, inInsertUnit);
      const results = await Promise.allSettled([
        commits.run((unit) => unit.insert('outbox', outboxRow(1, 'group'))),
        commits.run((unit) => unit.insert('outbox', outboxRow(1, 'group'))), // duplicate id
        commits.run((unit) => unit.insert('outbox', outboxRow(2, 'group'))),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      const rows = await store.db.selectFrom('outbox').select(['id']).where('instance_id', '=', 'group').orderBy('seq').execute();
      expect(rows.map((r) => r.id)).toEqual(['evt-group-1', 'evt-group-2']);
    });
  });
});
