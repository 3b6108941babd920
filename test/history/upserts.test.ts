// Merged upserts in every kind of unit on both stores: one row per key and unit, inserted or merged into the stored
// row, in the same write as the unit's inserts (a failed unit writes neither).
import { describe, expect, it } from 'vitest';
import { storeTargets, suiteStore } from '../support/harness.js';
import { inInsertUnit, inUnit } from '../../src/platform/store/unit.js';
import { inWriteUnit } from '../../src/platform/store/write-unit.js';
import { chatUpsert, mergeChatRows } from '../../src/history/rows.js';

const targets = await storeTargets();

function chatRow(instance: string, jid: string, unread: number, at: number, name: string | null = null) {
  return {
    id: `chat-${instance}-${jid}-${at}-${unread}`,
    instance_id: instance,
    remote_jid: jid,
    name,
    unread_messages: unread,
    archived: 0,
    marked_unread: 0,
    labels: '[]',
    last_message_at: at,
    created_at: at,
    updated_at: at,
  };
}

function outboxRow(id: string, instance: string) {
  return { id, instance_id: instance, instance_name: instance, event: 'CHATS_UPSERT', body: '{}', created_at: 1 };
}

describe.each(targets)('merged upserts on $name', (target) => {
  describe.skipIf(!target.available)('units', () => {
    const store = suiteStore(target);
    const chatOf = (instance: string, jid: string) =>
      store().db.selectFrom('chats').selectAll().where('instance_id', '=', instance).where('remote_jid', '=', jid).executeTakeFirst();

    it('merges rows of one key within a unit and into the stored row, beside the unit’s inserts', async () => {
      await inInsertUnit(store().db, async (unit) => {
        unit.insert('outbox', outboxRow('ups-1', 'ups'));
        unit.upsert(chatUpsert, 'ups|a', chatRow('ups', 'a@s.whatsapp.net', 1, 100, 'Ana'), mergeChatRows);
        unit.upsert(chatUpsert, 'ups|a', chatRow('ups', 'a@s.whatsapp.net', 1, 90), mergeChatRows);
        unit.upsert(chatUpsert, 'ups|b', chatRow('ups', 'b@s.whatsapp.net', 0, 95), mergeChatRows);
      });
      expect(await chatOf('ups', 'a@s.whatsapp.net')).toMatchObject({ unread_messages: 2, last_message_at: 100, name: 'Ana' });
      expect(await chatOf('ups', 'b@s.whatsapp.net')).toMatchObject({ unread_messages: 0, last_message_at: 95 });

      await inWriteUnit(store().db, (unit) => {
        unit.insert('outbox', outboxRow('ups-2', 'ups'));
        unit.upsert(chatUpsert, 'ups|a', chatRow('ups', 'a@s.whatsapp.net', 3, 80), mergeChatRows);
      });
      // An older message adds to the count and keeps the newer time and the name.
      expect(await chatOf('ups', 'a@s.whatsapp.net')).toMatchObject({ unread_messages: 5, last_message_at: 100, name: 'Ana' });

      await inUnit(store().db, async (unit) => {
        unit.upsert(chatUpsert, 'ups|a', chatRow('ups', 'a@s.whatsapp.net', 1, 120, 'Ana B.'), mergeChatRows);
      });
      expect(await chatOf('ups', 'a@s.whatsapp.net')).toMatchObject({ unread_messages: 6, last_message_at: 120, name: 'Ana B.' });
      const ids = await store().db.selectFrom('outbox').select('id').where('instance_id', '=', 'ups').orderBy('id').execute();
      expect(ids.map((row) => row.id)).toEqual(['ups-1', 'ups-2']);
    });

    it('writes no upsert of a unit whose inserts fail, and none of a write unit that fails', async () => {
      await inInsertUnit(store().db, async (unit) => {
        unit.insert('outbox', outboxRow('ups-dup', 'ups-fail'));
      });
      await expect(
        inInsertUnit(store().db, async (unit) => {
          unit.insert('outbox', outboxRow('ups-dup', 'ups-fail'));
          unit.upsert(chatUpsert, 'ups-fail|c', chatRow('ups-fail', 'c@s.whatsapp.net', 1, 1));
        }),
      ).rejects.toThrow();
      await expect(
        inWriteUnit(store().db, (unit) => {
          unit.upsert(chatUpsert, 'ups-fail|c', chatRow('ups-fail', 'c@s.whatsapp.net', 1, 1));
          unit.insert('outbox', outboxRow('ups-dup', 'ups-fail'));
        }),
      ).rejects.toThrow();
      expect(await chatOf('ups-fail', 'c@s.whatsapp.net')).toBeUndefined();
    });

    it('writes hundreds of upserts of one unit (several statements) at once', async () => {
      await inInsertUnit(store().db, async (unit) => {
        for (let i = 0; i < 450; i++) unit.upsert(chatUpsert, `many|${i}`, chatRow('many', `${i}@s.whatsapp.net`, 1, i), mergeChatRows);
      });
      const counted = await store()
        .db.selectFrom('chats')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('instance_id', '=', 'many')
        .executeTakeFirstOrThrow();
      expect(Number(counted.n)).toBe(450);
    });
  });
});
