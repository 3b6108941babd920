// An instance's `pacing` over HTTP on both stores: settings/set and settings/find, instance/create, the PACING_*
// defaults, what a client sending only Evolution's seven fields sees, and the 400s of bad pacing (nothing stored).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, storeTargets, type TestApp } from '../support/harness.js';
import { uniqueName } from '../support/unique.js';
import { expect400 } from '../support/answers.js';

const targets = await storeTargets();

const defaults = { enabled: false, maxPerMinute: 30, minGapMs: 1500, maxGapMs: 4500, newChatDelayMs: 8000 };

async function pacingColumns(t: TestApp, name: string) {
  return t.services.store.db
    .selectFrom('instances')
    .select(['pacing_enabled', 'pacing_max_per_minute', 'pacing_min_gap_ms', 'pacing_max_gap_ms', 'pacing_new_chat_delay_ms'])
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
}

describe.each(targets)('pacing settings over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`settings (${target.name})`, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startApp(target, {
        PACING_MAX_PER_MINUTE: '30',
        PACING_MIN_GAP_MS: '1500',
        PACING_MAX_GAP_MS: '4500',
        PACING_NEW_CHAT_DELAY_MS: '8000',
      });
    });
    afterAll(async () => {
      await t?.close();
    });

    async function created(body: Record<string, unknown> = {}) {
      const name = uniqueName('pace');
      const res = await t.api('POST', 'instance/create', { body: { instanceName: name, ...body } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return { name, res };
    }

    it('settings/find answers the PACING_* defaults for an instance that set none, and stores nothing of its own', async () => {
      const { name, res } = await created();
      // A create without pacing answers Evolution's settings only.
      expect(res.body.settings).not.toHaveProperty('pacing');
      const found = await t.api('GET', `settings/find/${name}`);
      expect(found.status).toBe(200);
      expect(found.body.pacing).toEqual(defaults);
      expect(await pacingColumns(t, name)).toEqual({
        pacing_enabled: null,
        pacing_max_per_minute: null,
        pacing_min_gap_ms: null,
        pacing_max_gap_ms: null,
        pacing_new_chat_delay_ms: null,
      });
    });

    it('settings/set stores the pacing fields given, answers the pacing in effect, and settings/find returns it', async () => {
      const { name } = await created();
      const res = await t.api('POST', `settings/set/${name}`, { body: { pacing: { enabled: true, maxPerMinute: 6, minGapMs: 2000, maxGapMs: 9000 } } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const pacing = { enabled: true, maxPerMinute: 6, minGapMs: 2000, maxGapMs: 9000, newChatDelayMs: 8000 };
      expect(res.body.settings).toMatchObject({ instanceName: name, settings: { reject_call: false, pacing } });
      expect((await t.api('GET', `settings/find/${name}`)).body).toMatchObject({ rejectCall: false, pacing });
      expect(await pacingColumns(t, name)).toEqual({
        pacing_enabled: 1,
        pacing_max_per_minute: 6,
        pacing_min_gap_ms: 2000,
        pacing_max_gap_ms: 9000,
        pacing_new_chat_delay_ms: null,
      });
      // Fields left out keep their value.
      const more = await t.api('POST', `settings/set/${name}`, { body: { pacing: { newChatDelayMs: 0 } } });
      expect(more.body.settings.settings.pacing).toEqual({ ...pacing, newChatDelayMs: 0 });
      // Kept across a reload of the registry (what a restart reads).
      await t.services.registry.load();
      expect((await t.api('GET', `settings/find/${name}`)).body.pacing).toEqual({ ...pacing, newChatDelayMs: 0 });
    });

    it('settings/set with only the seven behaviour fields keeps the pacing and answers exactly as Evolution', async () => {
      const { name } = await created();
      await t.api('POST', `settings/set/${name}`, { body: { pacing: { enabled: true, maxPerMinute: 3 } } });
      const res = await t.api('POST', `settings/set/${name}`, {
        body: { rejectCall: true, msgCall: 'busy', groupsIgnore: false, alwaysOnline: false, readMessages: false, readStatus: false, syncFullHistory: false },
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        settings: {
          instanceName: name,
          settings: { reject_call: true, groups_ignore: false, always_online: false, read_messages: false, read_status: false, sync_full_history: false },
        },
      });
      expect((await t.api('GET', `settings/find/${name}`)).body.pacing).toEqual({ ...defaults, enabled: true, maxPerMinute: 3 });
    });

    it('instance/create takes pacing and answers it in its settings', async () => {
      const { name, res } = await created({ rejectCall: true, pacing: { enabled: true, minGapMs: 100, maxGapMs: 200 } });
      const pacing = { ...defaults, enabled: true, minGapMs: 100, maxGapMs: 200 };
      expect(res.body.settings).toMatchObject({ reject_call: true, pacing });
      expect((await t.api('GET', `settings/find/${name}`)).body.pacing).toEqual(pacing);
      expect(await pacingColumns(t, name)).toMatchObject({ pacing_enabled: 1, pacing_min_gap_ms: 100, pacing_max_gap_ms: 200, pacing_max_per_minute: null });
    });

    it('refuses bad pacing with a 400 naming the field, and stores nothing', async () => {
      const { name } = await created();
      const set = (pacing: unknown) => t.api('POST', `settings/set/${name}`, { body: { rejectCall: true, pacing } });
      expect400(await set({ maxPerMinute: 0 }), 'pacing.maxPerMinute must be at least 1');
      expect400(await set({ maxPerMinute: 601 }), 'pacing.maxPerMinute must be at most 600');
      expect400(await set({ maxPerMinute: 2.5 }), 'pacing.maxPerMinute must be an integer');
      // JSON types are not coerced.
      expect400(await set({ maxPerMinute: '5' }), 'pacing.maxPerMinute must be an integer');
      expect400(await set({ enabled: 'true' }), 'pacing.enabled must be a boolean');
      expect400(await set({ minGapMs: -1 }), 'pacing.minGapMs must be at least 0');
      expect400(await set({ maxGapMs: 600_001 }), 'pacing.maxGapMs must be at most 600000');
      expect400(await set({ newChatDelayMs: null }), 'pacing.newChatDelayMs must be an integer');
      expect400(await set({ maxPerMinte: 5 }), 'pacing has no field "maxPerMinte"');
      expect400(await set('fast'), 'pacing must be an object');
      expect400(await set({ minGapMs: 5000, maxGapMs: 1000 }), 'pacing.minGapMs (5000) must not be greater than pacing.maxGapMs (1000)');
      // Against the value in effect: the default maximum gap is 4500.
      expect400(await set({ minGapMs: 5000 }), 'pacing.minGapMs (5000) must not be greater than pacing.maxGapMs (4500)');
      const found = await t.api('GET', `settings/find/${name}`);
      expect(found.body).toMatchObject({ rejectCall: false, pacing: defaults });
      expect((await pacingColumns(t, name)).pacing_min_gap_ms).toBeNull();
      // Both at once is fine.
      const ok = await set({ minGapMs: 5000, maxGapMs: 6000 });
      expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    });

    it('refuses a create with bad pacing and leaves no instance behind', async () => {
      const name = uniqueName('pace-bad');
      expect400(
        await t.api('POST', 'instance/create', { body: { instanceName: name, pacing: { maxPerMinute: 0 } } }),
        'pacing.maxPerMinute must be at least 1',
      );
      expect400(
        await t.api('POST', 'instance/create', { body: { instanceName: name, pacing: { minGapMs: 9000 } } }),
        'pacing.minGapMs (9000) must not be greater than pacing.maxGapMs (4500)',
      );
      const rows = await t.services.store.db.selectFrom('instances').select('id').where('name', '=', name).execute();
      expect(rows).toEqual([]);
    });
  });
});
