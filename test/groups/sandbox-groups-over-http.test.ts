// Groups end to end over HTTP on both stores: three linked sandbox instances, a real webhook receiver; create, invite
// by code, messages fanned out with their sender, promote/demote, announcement and locked modes, leave, and every
// group event at every member.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { sandboxParty, type Party } from '../support/sandbox-party.js';
import { uniqueName, uniqueNumber } from '../support/unique.js';

const targets = await storeTargets();

// biome-ignore lint/suspicious/noExplicitAny: answers and event data are read field by field
type Json = any;

const expect400 = (answer: { status: number; body: Json }, pattern: RegExp) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(answer.body.response.message.join(' ')).toMatch(pattern);
};

describe.each(targets)('groups over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox groups (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    let c: Party;
    let gid: string;
    let png: Buffer;

    /** Every member got the event (data matching `match`), each once at least. */
    const everyoneGot = async (event: string, parties: Party[], match: (data: Json) => boolean) => {
      await rx.waitFor(() => parties.every((p) => rx.of(event, p.name).some((e) => match(e.body.data))), 10_000);
    };
    const upsertOf = (party: Party, keyId: string) => rx.of('messages.upsert', party.name).find((e) => e.body.data?.key?.id === keyId)?.body.data;
    const sendText = (from: Party, text: string, extra: Record<string, unknown> = {}) =>
      t.api('POST', `message/sendText/${from.name}`, { body: { number: gid, text, ...extra } });

    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a = await sandboxParty(t, rx, 'grp-a', 'Alice');
      b = await sandboxParty(t, rx, 'grp-b', 'Bob');
      c = await sandboxParty(t, rx, 'grp-c', 'Carol');
      png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#0a0' } })
        .png()
        .toBuffer();
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    it('creates a group with its owner as superadmin; every member gets groups.upsert and the description update', async () => {
      const created = await t.api('POST', `group/create/${a.name}`, { body: { subject: 'Team', description: 'Our team', participants: [b.number] } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      gid = created.body.id;
      expect(gid).toMatch(/^\d{18}@g\.us$/);
      expect(created.body).toMatchObject({ subject: 'Team', desc: 'Our team', owner: a.owner, size: 2, announce: false, restrict: false });
      expect(created.body.participants).toEqual([
        { id: a.owner, lid: expect.stringMatching(/@lid$/), admin: 'superadmin' },
        { id: b.owner, lid: expect.stringMatching(/@lid$/), admin: null },
      ]);
      await everyoneGot('groups.upsert', [a, b], (d) => d[0]?.id === gid && d[0].subject === 'Team' && d[0].authorPn === a.owner);
      await everyoneGot('groups.update', [a, b], (d) => d[0]?.id === gid && d[0].desc === 'Our team');
      expect(rx.of('groups.upsert', c.name)).toHaveLength(0);
    });

    it('invites by code: only admins see it; another instance reads the invite and joins; everyone sees the add', async () => {
      // groupJid without "@g.us", as upstream appends it.
      const invite = await t.api('GET', `group/inviteCode/${a.name}?groupJid=${gid.replace('@g.us', '')}`);
      expect(invite.status, JSON.stringify(invite.body)).toBe(200);
      expect(invite.body.inviteCode).toMatch(/^[A-Za-z0-9]{22}$/);
      expect(invite.body.inviteUrl).toBe(`https://chat.whatsapp.com/${invite.body.inviteCode}`);
      expect400(await t.api('GET', `group/inviteCode/${b.name}?groupJid=${gid}`), /only admins .* invite link.*not-authorized/);

      const info = await t.api('GET', `group/inviteInfo/${c.name}?inviteCode=${invite.body.inviteCode}`);
      expect(info.status, JSON.stringify(info.body)).toBe(200);
      expect(info.body).toMatchObject({ id: gid, subject: 'Team', size: 2 });
      const accepted = await t.api('GET', `group/acceptInviteCode/${c.name}?inviteCode=${invite.body.inviteCode}`);
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
      expect(accepted.body).toEqual({ accepted: true, groupJid: gid });
      await everyoneGot('groups.upsert', [c], (d) => d[0]?.id === gid);
      await everyoneGot(
        'group-participants.update',
        [a, b, c],
        (d) => d.id === gid && d.action === 'add' && d.author === c.owner && d.participants[0] === c.owner && d.participantsData[0].admin === null,
      );
      const participants = await t.api('GET', `group/participants/${b.name}?groupJid=${gid}`);
      expect(participants.status).toBe(200);
      expect(participants.body.participants.map((p: Json) => p.id)).toEqual([a.owner, b.owner, c.owner]);
    });

    it('fans a message out to every other member with the sender as participant; mentionsEveryOne names all', async () => {
      const sent = await sendText(a, 'hello team');
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      expect(sent.body.key).toMatchObject({ remoteJid: gid, fromMe: true });
      expect(sent.body.participant).toBe(a.owner);
      const id = sent.body.key.id;
      await rx.waitFor(() => upsertOf(b, id) !== undefined && upsertOf(c, id) !== undefined, 10_000);
      for (const member of [b, c]) {
        expect(upsertOf(member, id)).toMatchObject({
          key: { remoteJid: gid, fromMe: false, id, participant: a.owner },
          pushName: 'Alice',
          message: { conversation: 'hello team' },
        });
      }
      expect(upsertOf(a, id)).toBeUndefined();
      await rx.waitFor(() => rx.of('messages.update', a.name).some((e) => e.body.data.keyId === id && e.body.data.status === 'DELIVERY_ACK'), 10_000);

      const everyone = await sendText(b, 'all hands', { mentionsEveryOne: true });
      expect(everyone.status, JSON.stringify(everyone.body)).toBe(201);
      expect(everyone.body.message.extendedTextMessage.contextInfo.mentionedJid).toEqual([a.owner, b.owner, c.owner]);
      await rx.waitFor(() => upsertOf(c, everyone.body.key.id) !== undefined, 10_000);
      expect(upsertOf(c, everyone.body.key.id).message.extendedTextMessage).toMatchObject({
        text: 'all hands',
        contextInfo: { mentionedJid: [a.owner, b.owner, c.owner] },
      });
      const named = await sendText(a, 'hi Carol', { mentioned: [c.number] });
      expect(named.body.message.extendedTextMessage.contextInfo.mentionedJid).toEqual([c.owner]);
    });

    it('promotes and demotes; announcement mode refuses a non-admin and lets an admin send', async () => {
      const promoted = await t.api('POST', `group/updateParticipant/${a.name}?groupJid=${gid}`, { body: { action: 'promote', participants: [b.number] } });
      expect(promoted.status, JSON.stringify(promoted.body)).toBe(201);
      expect(promoted.body.updateParticipants).toEqual([{ status: '200', jid: b.owner, content: { tag: 'participant', attrs: { jid: b.owner } } }]);
      await everyoneGot(
        'group-participants.update',
        [a, b, c],
        (d) => d.action === 'promote' && d.participants[0] === b.owner && d.participantsData[0].admin === 'admin',
      );

      const setting = await t.api('POST', `group/updateSetting/${a.name}?groupJid=${gid}`, { body: { action: 'announcement' } });
      expect(setting.status, JSON.stringify(setting.body)).toBe(201);
      expect(setting.body).toEqual({});
      await everyoneGot('groups.update', [a, b, c], (d) => d[0]?.id === gid && d[0].announce === true);
      expect400(await sendText(c, 'may I?'), /only admins can send messages .*announcement.*not-authorized/);
      expect400(await t.api('POST', `group/updateSetting/${c.name}?groupJid=${gid}`, { body: { action: 'not_announcement' } }), /only admins/);
      const byAdmin = await sendText(b, 'admins only now');
      expect(byAdmin.status, JSON.stringify(byAdmin.body)).toBe(201);
      await rx.waitFor(() => upsertOf(c, byAdmin.body.key.id)?.key.participant === b.owner, 10_000);

      const demoted = await t.api('POST', `group/updateParticipant/${a.name}`, { body: { groupJid: gid, action: 'demote', participants: [b.owner] } });
      expect(demoted.status).toBe(201);
      await everyoneGot(
        'group-participants.update',
        [a, b, c],
        (d) => d.action === 'demote' && d.participants[0] === b.owner && d.participantsData[0].admin === null,
      );
      expect400(await sendText(b, 'still?'), /only admins can send messages/);
      // The owner cannot be demoted; a non-member cannot be promoted; a member cannot be added twice: per participant.
      const mixed = await t.api('POST', `group/updateParticipant/${b.name}?groupJid=${gid}`, { body: { action: 'add', participants: ['4930123456'] } });
      expect400(mixed, /only admins/);
      const statuses = await t.api('POST', `group/updateParticipant/${a.name}?groupJid=${gid}`, {
        body: { action: 'add', participants: [c.number, '4930123456'] },
      });
      expect(statuses.status).toBe(201);
      expect(statuses.body.updateParticipants.map((r: Json) => r.status)).toEqual(['409', '200']);
      expect((await t.api('POST', `group/updateSetting/${a.name}?groupJid=${gid}`, { body: { action: 'not_announcement' } })).status).toBe(201);
      await everyoneGot('groups.update', [a, b, c], (d) => d[0]?.announce === false);
    });

    it('changes subject, description, picture and the disappearing timer; locked lets only admins edit', async () => {
      const subject = await t.api('POST', `group/updateGroupSubject/${c.name}?groupJid=${gid}`, { body: { subject: 'Team 2' } });
      expect(subject.status, JSON.stringify(subject.body)).toBe(201);
      expect(subject.body).toEqual({ update: 'success' });
      await everyoneGot('groups.update', [a, b, c], (d) => d[0]?.subject === 'Team 2' && d[0].authorPn === c.owner);
      expect((await t.api('POST', `group/updateSetting/${a.name}?groupJid=${gid}`, { body: { action: 'locked' } })).status).toBe(201);
      await everyoneGot('groups.update', [a, b, c], (d) => d[0]?.restrict === true);
      expect400(await t.api('POST', `group/updateGroupDescription/${c.name}?groupJid=${gid}`, { body: { description: 'no' } }), /only admins can change/);
      const description = await t.api('POST', `group/updateGroupDescription/${a.name}?groupJid=${gid}`, { body: { description: 'Rules' } });
      expect(description.status).toBe(201);
      await everyoneGot('groups.update', [a, b, c], (d) => d[0]?.desc === 'Rules');

      const picture = await t.api('POST', `group/updateGroupPicture/${a.name}?groupJid=${gid}`, { body: { image: png.toString('base64') } });
      expect(picture.status, JSON.stringify(picture.body)).toBe(201);
      await everyoneGot('groups.update', [a, b, c], (d) => typeof d[0]?.pictureUrl === 'string');
      const ephemeral = await t.api('POST', `group/toggleEphemeral/${a.name}?groupJid=${gid}`, { body: { expiration: 604800 } });
      expect(ephemeral.status).toBe(201);
      expect(ephemeral.body).toEqual({ success: true });
      await everyoneGot('groups.update', [a, b, c], (d) => d[0]?.ephemeralDuration === 604800);

      const found = await t.api('GET', `group/findGroupInfos/${b.name}?groupJid=${gid}`);
      expect(found.status).toBe(200);
      expect(found.body).toMatchObject({ id: gid, subject: 'Team 2', desc: 'Rules', restrict: true, announce: false, size: 4, owner: a.owner });
      expect(found.body.participants).toHaveLength(4);
      const image = await fetch(found.body.pictureUrl);
      expect(image.status).toBe(200);
      expect(image.headers.get('content-type')).toMatch(/jpeg/);
      const invite = await t.api('GET', `group/inviteCode/${a.name}?groupJid=${gid}`);
      const info = await t.api('GET', `group/inviteInfo/${a.name}?inviteCode=${invite.body.inviteCode}`);
      expect(info.body.ephemeralDuration).toBe(604800);
    });

    it('revokes the invite code, lists groups, and lets a member leave; every member sees it', async () => {
      const old = (await t.api('GET', `group/inviteCode/${a.name}?groupJid=${gid}`)).body.inviteCode;
      const revoked = await t.api('POST', `group/revokeInviteCode/${a.name}?groupJid=${gid}`);
      expect(revoked.status, JSON.stringify(revoked.body)).toBe(201);
      expect(revoked.body.revoked).toBe(true);
      expect(revoked.body.inviteCode).not.toBe(old);
      expect((await t.api('GET', `group/inviteInfo/${c.name}?inviteCode=${old}`)).status).toBe(404);
      expect((await t.api('GET', `group/acceptInviteCode/${c.name}?inviteCode=${old}`)).status).toBe(404);

      const all = await t.api('GET', `group/fetchAllGroups/${c.name}?getParticipants=true`);
      expect(all.status).toBe(200);
      expect(all.body.find((g: Json) => g.id === gid)).toMatchObject({ subject: 'Team 2', size: 4, pictureUrl: expect.any(String) });
      expect(all.body.find((g: Json) => g.id === gid).participants).toHaveLength(4);
      const bare = await t.api('GET', `group/fetchAllGroups/${c.name}?getParticipants=false`);
      expect(bare.body.find((g: Json) => g.id === gid).participants).toBeUndefined();

      const left = await t.api('DELETE', `group/leaveGroup/${c.name}?groupJid=${gid}`);
      expect(left.status, JSON.stringify(left.body)).toBe(200);
      expect(left.body).toEqual({ groupJid: gid, leave: true });
      await everyoneGot('group-participants.update', [a, b, c], (d) => d.action === 'remove' && d.participants[0] === c.owner && d.author === c.owner);
      expect400(await sendText(c, 'gone'), /not a participant/);
      expect400(await t.api('GET', `group/findGroupInfos/${c.name}?groupJid=${gid}`), /not a participant/);
      expect((await t.api('GET', `group/fetchAllGroups/${c.name}?getParticipants=false`)).body.some((g: Json) => g.id === gid)).toBe(false);

      // sendInvite: the link as a text message to each number, queued as any send.
      const sent = await t.api('POST', `group/sendInvite/${a.name}`, { body: { groupJid: gid, description: 'Come back', numbers: [c.number] } });
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
      expect(sent.body).toEqual({ send: true, inviteUrl: `https://chat.whatsapp.com/${revoked.body.inviteCode}` });
      await rx.waitFor(() => rx.of('messages.upsert', c.name).some((e) => e.body.data.message?.conversation === `Come back\n\n${sent.body.inviteUrl}`), 10_000);
    });

    it('an instance with groupsIgnore gets no group messages and no group events; the sender still has DELIVERY_ACK', async () => {
      expect((await t.api('POST', `settings/set/${b.name}`, { body: { groupsIgnore: true } })).status).toBe(201);
      const before = rx.of('groups.update', b.name).length;
      const sent = await sendText(a, 'ignored by Bob');
      await rx.waitFor(
        () => rx.of('messages.update', a.name).some((e) => e.body.data.keyId === sent.body.key.id && e.body.data.status === 'DELIVERY_ACK'),
        10_000,
      );
      expect((await t.api('POST', `group/updateGroupDescription/${a.name}?groupJid=${gid}`, { body: { description: 'quiet' } })).status).toBe(201);
      await everyoneGot('groups.update', [a], (d) => d[0]?.desc === 'quiet');
      expect(upsertOf(b, sent.body.key.id)).toBeUndefined();
      expect(rx.of('groups.update', b.name)).toHaveLength(before);
      expect((await t.api('POST', `settings/set/${b.name}`, { body: { groupsIgnore: false } })).status).toBe(201);
    });

    it('refuses bad input with a 400 that says what to fix, an unknown group with a 404', async () => {
      expect400(await t.api('GET', `group/findGroupInfos/${a.name}`), /The group id needs to be informed in the query/);
      expect400(await t.api('GET', `group/findGroupInfos/${a.name}?groupJid=abc`), /groupJid "abc" is not a group id/);
      const unknown = await t.api('GET', `group/findGroupInfos/${a.name}?groupJid=120363999999999999@g.us`);
      expect(unknown.status).toBe(404);
      expect(unknown.body.response.message.join(' ')).toMatch(/was not found/);
      expect((await t.api('POST', `group/updateGroupSubject/${a.name}?groupJid=120363999999999999`, { body: { subject: 'x' } })).status).toBe(404);
      expect400(await t.api('GET', `group/inviteInfo/${a.name}`), /invite code id needs to be informed/);
      expect400(await t.api('GET', `group/inviteInfo/${a.name}?inviteCode=short`), /is not an invite code/);
      expect((await t.api('GET', `group/inviteInfo/${a.name}?inviteCode=AAAAAAAAAAAAAAAAAAAAAA`)).status).toBe(404);
      expect400(await t.api('GET', `group/fetchAllGroups/${a.name}`), /The getParticipants needs to be informed in the query/);
      expect((await t.api('GET', `group/fetchAllGroups/${a.name}?getParticipants=yes`)).status).toBe(400);
      expect400(await t.api('POST', `group/updateParticipant/${a.name}?groupJid=${gid}`, { body: { action: 'kick', participants: [b.number] } }), /action/);
      expect400(await t.api('POST', `group/updateParticipant/${a.name}?groupJid=${gid}`, { body: { action: 'add', participants: [gid] } }), /not a person/);
      expect400(await t.api('POST', `group/toggleEphemeral/${a.name}?groupJid=${gid}`, { body: { expiration: 5 } }), /expiration/);
      expect400(await t.api('POST', `group/create/${a.name}`, { body: { subject: ' ', participants: [b.number] } }), /subject must not be empty/);
      expect400(await t.api('POST', `group/create/${a.name}`, { body: { subject: 'x', participants: [] } }), /participants/);
      expect400(await t.api('POST', `group/create/${a.name}`, { body: { subject: 'x', participants: [b.number, b.owner] } }), /same person twice/);
      expect400(await t.api('POST', `group/sendInvite/${a.name}`, { body: { groupJid: '120363', description: 'x', numbers: [b.number] } }), /not a group id/);
      expect400(await t.api('POST', `message/sendText/${a.name}`, { body: { number: '120363999999999999@g.us', text: 'x' } }), /does not exist/);
    });

    it('the OpenAPI document has every group route with its request and answer schemas', async () => {
      const doc = await t.api('GET', 'docs/json', { key: null });
      expect(doc.status).toBe(200);
      const routes: [string, string, string, string][] = [
        ['post', 'create', 'participants', '201'],
        ['post', 'updateGroupSubject', 'subject', '201'],
        ['post', 'updateGroupPicture', 'image', '201'],
        ['post', 'updateGroupDescription', 'description', '201'],
        ['get', 'inviteCode', 'groupJid', '200'],
        ['post', 'revokeInviteCode', 'groupJid', '201'],
        ['post', 'sendInvite', 'numbers', '200'],
        ['get', 'inviteInfo', 'inviteCode', '200'],
        ['get', 'acceptInviteCode', 'inviteCode', '200'],
        ['get', 'findGroupInfos', 'groupJid', '200'],
        ['get', 'fetchAllGroups', 'getParticipants', '200'],
        ['get', 'participants', 'groupJid', '200'],
        ['post', 'updateParticipant', 'action', '201'],
        ['post', 'updateSetting', 'action', '201'],
        ['post', 'toggleEphemeral', 'expiration', '201'],
        ['delete', 'leaveGroup', 'groupJid', '200'],
      ];
      for (const [method, route, field, status] of routes) {
        const operation = doc.body.paths[`/messenger/group/${route}/{instance}`]?.[method];
        expect(operation, route).toBeDefined();
        expect(JSON.stringify([operation.requestBody ?? null, operation.parameters ?? []]), route).toContain(field);
        expect(operation.responses[status]?.content, `${route} ${status}`).toBeDefined();
      }
    });

    it('answers "Method not available" on EVOLUTION and WHATSAPP-BUSINESS, and needs a linked instance on the sandbox', async () => {
      const evolution = uniqueName('grp-evo');
      expect((await t.api('POST', 'instance/create', { body: { instanceName: evolution, integration: 'EVOLUTION' } })).status).toBe(201);
      expect400(await t.api('GET', `group/fetchAllGroups/${evolution}?getParticipants=false`), /Method not available on Evolution Channel/);
      const cloud = uniqueName('grp-cloud');
      const created = await t.api('POST', 'instance/create', {
        body: { instanceName: cloud, integration: 'WHATSAPP-BUSINESS', token: 'meta-token', number: uniqueNumber('1') },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect400(
        await t.api('POST', `group/create/${cloud}`, { body: { subject: 'x', participants: [b.number] } }),
        /Method not available on WhatsApp Business API/,
      );
      const unlinked = uniqueName('grp-unlinked');
      expect((await t.api('POST', 'instance/create', { body: { instanceName: unlinked, integration: 'SANDBOX' } })).status).toBe(201);
      expect400(await t.api('GET', `group/fetchAllGroups/${unlinked}?getParticipants=false`), /not connected.*needs a linked instance/);
    });
  });
});
