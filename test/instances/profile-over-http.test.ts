// Profile routes over HTTP on both stores: picture URLs, profiles a sandbox pair sees of each other, the own name and
// "about" (stored, kept across a restart, carried as pushName), privacy settings, and "Method not available".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { uniqueName } from '../support/unique.js';
import { waitFor } from '../support/wait.js';
import { expect400 } from '../support/answers.js';
import { sandboxParty as party, type Party } from '../support/sandbox-party.js';

const targets = await storeTargets();

// biome-ignore lint/suspicious/noExplicitAny: answers and event data are read field by field
type Json = any;

async function listed(t: TestApp, name: string): Promise<Json> {
  const res = await t.api('GET', `instance/fetchInstances?instanceName=${name}`);
  expect(res.status).toBe(200);
  return res.body[0].instance;
}

describe.each(targets)('profile routes over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a = await party(t, rx, 'prof-a', 'Ana at the desk');
      b = await party(t, rx, 'prof-b');
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    it('fetchProfilePictureUrl answers 200 with the address and a null URL (no picture set)', async () => {
      const res = await t.api('POST', `chat/fetchProfilePictureUrl/${a.name}`, { body: { number: b.number } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ wuid: b.owner, profilePictureUrl: null });
      expect400(await t.api('POST', `chat/fetchProfilePictureUrl/${a.name}`, { body: {} }), 'number is required');
    });

    it('fetchProfile shows the other account as the network knows it, and the own one without number', async () => {
      const res = await t.api('POST', `chat/fetchProfile/${b.name}`, { body: { number: a.number } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({
        wuid: a.owner,
        name: 'Ana at the desk',
        numberExists: true,
        picture: null,
        status: { status: null, setAt: null },
        isBusiness: false,
      });
      const own = await t.api('POST', `chat/fetchProfile/${b.name}`, { body: {} });
      expect(own.status, JSON.stringify(own.body)).toBe(200);
      expect(own.body).toMatchObject({ wuid: b.owner, name: b.name, numberExists: true });
      expect400(await t.api('POST', `chat/fetchProfile/${a.name}`, { body: { number: '4915999000111' } }), /is not on WhatsApp/);
    });

    it('updateProfileName and updateProfileStatus change the profile others see, the registry and later pushNames', async () => {
      const named = await t.api('POST', `chat/updateProfileName/${a.name}`, { body: { name: 'Ana (front desk)' } });
      expect(named.status, JSON.stringify(named.body)).toBe(200);
      expect(named.body).toEqual({ update: 'success' });
      const about = await t.api('POST', `chat/updateProfileStatus/${a.name}`, { body: { status: 'Open 9-5' } });
      expect(about.status, JSON.stringify(about.body)).toBe(200);
      expect(about.body).toEqual({ update: 'success' });

      const seen = await t.api('POST', `chat/fetchProfile/${b.name}`, { body: { number: a.number } });
      expect(seen.body).toMatchObject({ name: 'Ana (front desk)', status: { status: 'Open 9-5' } });
      expect(new Date(seen.body.status.setAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
      expect(await listed(t, a.name)).toMatchObject({ profileName: 'Ana (front desk)', profileStatus: 'Open 9-5' });

      // A later message carries the new name as its pushName on the receiving side.
      const sent = await t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: 'renamed' } });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      expect(sent.body.pushName).toBe('Ana (front desk)');
      const keyId = sent.body.key.id;
      await rx.waitFor(() => rx.of('messages.upsert', b.name).some((e) => e.body.data?.key?.id === keyId), 10_000);
      expect(rx.of('messages.upsert', b.name).find((e) => e.body.data.key.id === keyId)!.body.data.pushName).toBe('Ana (front desk)');

      // Kept in the store: a restart reconnects with the same profile.
      expect((await t.api('POST', `instance/restart/${a.name}`)).status).toBeLessThan(300);
      await waitFor(async () => (await listed(t, a.name)).status === 'open', 10_000, { what: () => 'instance open again after restart' });
      expect(await listed(t, a.name)).toMatchObject({ profileName: 'Ana (front desk)', profileStatus: 'Open 9-5' });
      const again = await t.api('POST', `chat/fetchProfile/${b.name}`, { body: { number: a.number } });
      expect(again.body).toMatchObject({ name: 'Ana (front desk)', status: { status: 'Open 9-5' } });

      expect400(await t.api('POST', `chat/updateProfileName/${a.name}`, { body: {} }), 'name is required');
      expect400(await t.api('POST', `chat/updateProfileStatus/${a.name}`, { body: {} }), 'status is required');
    });

    it('fetchPrivacySettings answers the defaults until updatePrivacySettings stores others', async () => {
      const first = await t.api('GET', `chat/fetchPrivacySettings/${b.name}`);
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body).toEqual({ readreceipts: 'all', profile: 'all', status: 'contacts', online: 'all', last: 'all', groupadd: 'all' });
      const privacy = { readreceipts: 'none', profile: 'contacts', status: 'none', online: 'match_last_seen', last: 'none', groupadd: 'contacts' };
      expect((await t.api('POST', `chat/updatePrivacySettings/${b.name}`, { body: privacy })).status).toBe(201);
      expect((await t.api('GET', `chat/fetchPrivacySettings/${b.name}`)).body).toEqual(privacy);
    });

    it('changing the profile needs a linked instance', async () => {
      const name = uniqueName('prof-unlinked');
      expect((await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } })).status).toBe(201);
      expect400(await t.api('POST', `chat/updateProfileName/${name}`, { body: { name: 'X' } }), /is not connected/);
    });

    it('answers "Method not available" on EVOLUTION, and a null picture URL there (as upstream)', async () => {
      const name = uniqueName('prof-evo');
      expect((await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'EVOLUTION' } })).status).toBe(201);
      const picture = await t.api('POST', `chat/fetchProfilePictureUrl/${name}`, { body: { number: b.number } });
      expect(picture.status).toBe(200);
      expect(picture.body).toEqual({ wuid: b.owner, profilePictureUrl: null });
      for (const [method, path, body] of [
        ['POST', 'chat/fetchProfile', { number: b.number }],
        ['POST', 'chat/updateProfileName', { name: 'X' }],
        ['POST', 'chat/updateProfileStatus', { status: 'X' }],
        ['GET', 'chat/fetchPrivacySettings', undefined],
      ] as const) {
        expect400(await t.api(method, `${path}/${name}`, body ? { body } : {}), /^Method not available on Evolution Channel/);
      }
    });
  });
});
