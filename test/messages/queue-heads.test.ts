// The send worker's view of a queue on both stores: each chat's first pending send, and when it is due.
import { describe, expect, it } from 'vitest';
import { storeTargets, suiteStore } from '../support/harness.js';
import { instancesWithPendingSends, queueHeads } from '../../src/messages/queue-heads.js';

const targets = await storeTargets();

describe.each(targets)('queue heads on $name', (target) => {
  describe.skipIf(!target.available)('store', () => {
    const store = suiteStore(target);

    let made = 0;
    const queue = async (instance: string, chat: string, nextAttemptAt: number, state = 'pending') => {
      made += 1;
      await store()
        .db.insertInto('send_queue')
        .values({
          instance_id: instance,
          message_id: `m-${made}`,
          chat_jid: chat,
          payload: '{}',
          state,
          attempts: 0,
          next_attempt_at: nextAttemptAt,
          expires_at: nextAttemptAt + 1000,
          last_error: null,
          created_at: made,
        })
        .execute();
    };
    const sorted = (heads: { chat: string; readyAt: number }[]) => [...heads].sort((a, b) => a.chat.localeCompare(b.chat));

    it('answers no chat for an instance with nothing queued', async () => {
      expect(await queueHeads(store().db, 'empty')).toEqual([]);
    });

    it("answers every chat with pending sends once, with its first send's due time, and nothing of other instances", async () => {
      // Chat b's first send waits for a retry (due later than the one queued after it); a's is due at once.
      await queue('one', 'b@s.whatsapp.net', 5_000);
      await queue('one', 'a@s.whatsapp.net', 100);
      await queue('one', 'b@s.whatsapp.net', 10);
      await queue('one', 'a@s.whatsapp.net', 300);
      for (let i = 0; i < 50; i++) await queue('one', 'c@g.us', 1_000 + i);
      await queue('one', 'd@s.whatsapp.net', 7, 'held');
      await queue('other', 'e@s.whatsapp.net', 1);
      await queue('other', 'a@s.whatsapp.net', 2);

      expect(sorted(await queueHeads(store().db, 'one'))).toEqual([
        { chat: 'a@s.whatsapp.net', readyAt: 100 },
        { chat: 'b@s.whatsapp.net', readyAt: 5_000 },
        { chat: 'c@g.us', readyAt: 1_000 },
      ]);
      expect(sorted(await queueHeads(store().db, 'other'))).toEqual([
        { chat: 'a@s.whatsapp.net', readyAt: 2 },
        { chat: 'e@s.whatsapp.net', readyAt: 1 },
      ]);
    });

    it('lists every instance with pending sends once, and none whose sends are all held', async () => {
      await queue('poll-a', 'a@s.whatsapp.net', 1);
      for (let i = 0; i < 5; i++) await queue('poll-b', `${i}@s.whatsapp.net`, 1);
      await queue('poll-c', 'a@s.whatsapp.net', 1, 'held');
      const listed = await instancesWithPendingSends(store().db);
      expect(new Set(listed).size).toBe(listed.length);
      expect(listed).toEqual(expect.arrayContaining(['poll-a', 'poll-b']));
      expect(listed).not.toContain('poll-c');
      expect(listed).not.toContain('empty');
    });

    it("moves on to a chat's next send once its head is gone", async () => {
      await queue('two', 'x@s.whatsapp.net', 40);
      await queue('two', 'x@s.whatsapp.net', 60);
      const first = await store().db.selectFrom('send_queue').select('seq').where('instance_id', '=', 'two').orderBy('seq').executeTakeFirstOrThrow();
      await store().db.deleteFrom('send_queue').where('seq', '=', first.seq).execute();
      expect(await queueHeads(store().db, 'two')).toEqual([{ chat: 'x@s.whatsapp.net', readyAt: 60 }]);
      await store().db.deleteFrom('send_queue').where('instance_id', '=', 'two').execute();
      expect(await queueHeads(store().db, 'two')).toEqual([]);
    });
  });
});
