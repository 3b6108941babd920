// Profile pictures and business profiles over HTTP on both stores: a sandbox picture set from base64 or a URL is seen
// by another instance (fetchProfilePictureUrl, fetchProfile) and in fetchInstances, removed again; business profile
// answers; the 400s; "Method not available" on the kinds without profiles.
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { uniqueName } from '../support/unique.js';
import { expect400 } from '../support/answers.js';
import { sandboxParty as party, type Party } from '../support/sandbox-party.js';

const targets = await storeTargets();

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
type Json = any;

async function listed(t: TestApp, name: string): Promise<Json> {
  const res = await t.api('GET', `instance/fetchInstances?instanceName=${name}`);
  expect(res.status).toBe(200);
  return res.body[0].instance;
}

async function pictureSeenBy(t: TestApp, viewer: Party, owner: Party): Promise<string | null> {
  const res = await t.api('POST', `chat/fetchProfilePictureUrl/${viewer.name}`, { body: { number: owner.number } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.profilePictureUrl;
}

describe.each(targets)('profile pictures and business profiles over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a = await party(t, rx, 'pic-a');
      b = await party(t, rx, 'pic-b');
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    it('updateProfilePicture (base64) answers {update: "success"}; others see the picture, fetchInstances shows its URL', async () => {
      expect(await pictureSeenBy(t, b, a)).toBeNull();
      const png = await sharp({ create: { width: 800, height: 600, channels: 3, background: '#228833' } })
        .png()
        .toBuffer();
      const res = await t.api('POST', `chat/updateProfilePicture/${a.name}`, { body: { picture: png.toString('base64') } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ update: 'success' });

      const url = await pictureSeenBy(t, b, a);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/messenger\/sandbox\/pictures\/[0-9a-f]{32}\.jpg$/);
      const served = await fetch(url!);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe('image/jpeg');
      const meta = await sharp(Buffer.from(await served.arrayBuffer())).metadata();
      expect(meta).toMatchObject({ format: 'jpeg', width: 640, height: 640 });

      const profile = await t.api('POST', `chat/fetchProfile/${b.name}`, { body: { number: a.number } });
      expect(profile.body.picture).toBe(url);
      expect((await listed(t, a.name)).profilePictureUrl).toBe(url);

      // B takes A's picture by its URL (fetched with the guarded media fetcher): a new file of its own.
      const copied = await t.api('POST', `chat/updateProfilePicture/${b.name}`, { body: { picture: url } });
      expect(copied.status, JSON.stringify(copied.body)).toBe(200);
      const bUrl = await pictureSeenBy(t, a, b);
      expect(bUrl).toMatch(/\/sandbox\/pictures\/[0-9a-f]{32}\.jpg$/);
      expect(bUrl).not.toBe(url);
      expect((await listed(t, b.name)).profilePictureUrl).toBe(bUrl);
    });

    it('a new picture replaces the old one (its URL is gone); removeProfilePicture clears it everywhere', async () => {
      const before = await pictureSeenBy(t, b, a);
      expect(before).not.toBeNull();
      const jpeg = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#884422' } })
        .jpeg()
        .toBuffer();
      const res = await t.api('POST', `chat/updateProfilePicture/${a.name}`, { body: { picture: `data:image/jpeg;base64,${jpeg.toString('base64')}` } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const after = await pictureSeenBy(t, b, a);
      expect(after).not.toBe(before);
      expect((await fetch(before!)).status).toBe(404);

      const removed = await t.api('DELETE', `chat/removeProfilePicture/${a.name}`);
      expect(removed.status, JSON.stringify(removed.body)).toBe(200);
      expect(removed.body).toEqual({ update: 'success' });
      expect(await pictureSeenBy(t, b, a)).toBeNull();
      expect((await t.api('POST', `chat/fetchProfile/${b.name}`, { body: { number: a.number } })).body.picture).toBeNull();
      expect((await listed(t, a.name)).profilePictureUrl).toBeNull();
      expect((await fetch(after!)).status).toBe(404);
      // Removing when there is none is no error.
      expect((await t.api('DELETE', `chat/removeProfilePicture/${a.name}`)).status).toBe(200);
    });

    it('a logout takes the picture with the account (its URL is gone)', async () => {
      const c = await party(t, rx, 'pic-c');
      const png = await sharp({ create: { width: 200, height: 200, channels: 3, background: '#123456' } })
        .png()
        .toBuffer();
      expect((await t.api('POST', `chat/updateProfilePicture/${c.name}`, { body: { picture: png.toString('base64') } })).status).toBe(200);
      const url = await pictureSeenBy(t, a, c);
      expect((await fetch(url!)).status).toBe(200);
      expect((await t.api('DELETE', `instance/logout/${c.name}`)).status).toBe(200);
      expect((await fetch(url!)).status).toBe(404);
    });

    it('updateProfilePicture answers 400s naming picture', async () => {
      const set = (body: unknown) => t.api('POST', `chat/updateProfilePicture/${a.name}`, { body });
      expect400(await set({}), 'picture is required: an image URL or base64');
      expect400(await set({ picture: Buffer.from('%PDF-1.4 not an image').toString('base64') }), /^picture must be an image/);
      expect400(await set({ picture: 'ftp://example.com/x.jpg' }), /^picture URL must use http or https/);
      expect400(await set({ picture: `${t.url}/messenger/sandbox/pictures/${'0'.repeat(32)}.jpg` }), /picture/);
    });

    it('fetchBusinessProfile: sandbox accounts are not businesses (the number check beside it), own account without number', async () => {
      const other = await t.api('POST', `chat/fetchBusinessProfile/${a.name}`, { body: { number: b.number } });
      expect(other.status, JSON.stringify(other.body)).toBe(200);
      expect(other.body).toEqual({
        isBusiness: false,
        message: 'Not is business profile',
        jid: b.owner,
        exists: true,
        number: b.number,
        name: b.name,
        lid: expect.stringMatching(/^\d{15}@lid$/),
      });
      const own = await t.api('POST', `chat/fetchBusinessProfile/${a.name}`, { body: {} });
      expect(own.status, JSON.stringify(own.body)).toBe(200);
      expect(own.body).toMatchObject({ isBusiness: false, message: 'Not is business profile', jid: a.owner, exists: true });
      const unknown = await t.api('POST', `chat/fetchBusinessProfile/${a.name}`, { body: { number: '4915999000111' } });
      expect(unknown.status, JSON.stringify(unknown.body)).toBe(200);
      expect(unknown.body).toMatchObject({ isBusiness: false, exists: false, number: '4915999000111' });
    });

    it('the OpenAPI document has the three routes with their request and answer schemas', async () => {
      const doc = await t.api('GET', 'docs/json', { key: null });
      expect(doc.status).toBe(200);
      const business = doc.body.paths['/messenger/chat/fetchBusinessProfile/{instance}'].post;
      expect(JSON.stringify(business.requestBody)).toContain('number');
      expect(JSON.stringify(business.responses['200'])).toContain('isBusiness');
      const update = doc.body.paths['/messenger/chat/updateProfilePicture/{instance}'].post;
      expect(JSON.stringify(update.requestBody)).toContain('picture');
      expect(JSON.stringify(update.responses['200'])).toContain('success');
      expect(Object.keys(doc.body.paths['/messenger/chat/removeProfilePicture/{instance}'].delete.responses)).toContain('200');
    });

    it('the picture routes need a linked instance', async () => {
      const name = uniqueName('pic-unlinked');
      expect((await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } })).status).toBe(201);
      expect400(await t.api('DELETE', `chat/removeProfilePicture/${name}`), /is not connected/);
      expect400(await t.api('POST', `chat/fetchBusinessProfile/${name}`, { body: {} }), /is not connected/);
    });

    it('answers "Method not available" on EVOLUTION and WHATSAPP-BUSINESS', async () => {
      const evolution = uniqueName('pic-evo');
      expect((await t.api('POST', 'instance/create', { body: { instanceName: evolution, integration: 'EVOLUTION' } })).status).toBe(201);
      const cloud = uniqueName('pic-cloud');
      const created = await t.api('POST', 'instance/create', {
        body: { instanceName: cloud, integration: 'WHATSAPP-BUSINESS', token: 'meta-token', number: '100200300400' },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      for (const [name, label] of [
        [evolution, 'Evolution Channel'],
        [cloud, 'WhatsApp Business API'],
      ]) {
        for (const [method, path, body] of [
          ['POST', 'chat/fetchBusinessProfile', { number: b.number }],
          ['POST', 'chat/updateProfilePicture', { picture: 'https://example.com/x.jpg' }],
          ['DELETE', 'chat/removeProfilePicture', undefined],
        ] as const) {
          expect400(await t.api(method, `${path}/${name}`, body ? { body } : {}), new RegExp(`^Method not available on ${label}`));
        }
      }
      expect400(
        await t.api('POST', `message/sendButtons/${evolution}`, {
          body: { number: b.number, title: 'T', buttons: [{ type: 'reply', displayText: 'A', id: 'a' }] },
        }),
        /^Method not available on Evolution Channel/,
      );
    });
  });
});
