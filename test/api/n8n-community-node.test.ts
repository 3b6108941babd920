// Every message, chat, profile and group operation of the n8n community node (n8n-nodes-evolution-api 1.0.4, its own
// request code) against linked sandbox instances, on both stores: each succeeds and the server did what it asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { sandboxParty, type Party } from '../support/sandbox-party.js';
import { runNodeOperation } from '../support/n8n-node.js';

const targets = await storeTargets();

// biome-ignore lint/suspicious/noExplicitAny: answers and event data are read field by field
type Json = any;

/** A second of a 440 Hz tone as a 16-bit mono WAV file: real audio for the voice-note operation. */
function toneWav(seconds = 1, rate = 16000): Buffer {
  const samples = seconds * rate;
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0);
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVEfmt ', 8);
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(rate, 24);
  wav.writeUInt32LE(rate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36);
  wav.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++) wav.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / rate) * 12000), 44 + i * 2);
  return wav;
}

/** The first box of an MP4 file (`ftyp`, brand isom): what makes bytes a video to a type sniffer. */
function mp4Header(): Buffer {
  const box = Buffer.alloc(24);
  box.writeUInt32BE(24, 0);
  box.write('ftypisom', 4);
  box.writeUInt32BE(0x200, 12);
  box.write('isommp41', 16);
  return Buffer.concat([box, Buffer.alloc(64)]);
}

describe.each(targets)('the n8n community node on $name', (target) => {
  describe.skipIf(!target.available)(`its message, chat, profile and group operations (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    let server: { url: string; apikey: string };
    let png: Buffer;
    /** Runs an operation and answers its `data` after checking that the node reported success. */
    const run = async (resource: string, operation: string, parameters: Record<string, unknown>): Promise<Json> => {
      const out = (await runNodeOperation(server, resource, operation, parameters)) as Json;
      expect(out.success, JSON.stringify(out)).not.toBe(false);
      return 'data' in out ? out.data : out;
    };
    const jidOf = (p: Party) => `${p.number}@s.whatsapp.net`;
    /** The upsert B received for a message A sent. */
    const receivedByB = async (keyId: string): Promise<Json> => {
      await rx.waitFor(() => rx.of('messages.upsert', b.name).some((e) => e.body.data?.key?.id === keyId), 10_000);
      return rx.of('messages.upsert', b.name).find((e) => e.body.data.key.id === keyId)!.body.data;
    };
    const sentText: { id?: string } = {};

    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a = await sandboxParty(t, rx, 'n8n-a', 'Alice');
      b = await sandboxParty(t, rx, 'n8n-b', 'Bob');
      server = { url: t.url, apikey: t.globalKey };
      png = await sharp({ create: { width: 32, height: 24, channels: 3, background: '#c00' } })
        .png()
        .toBuffer();
      const text = await run('messages-api', 'send-text', { instanceName: a.name, remoteJid: b.number, messageText: 'hello from n8n' });
      sentText.id = text.key.id;
      await receivedByB(text.key.id);
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    it('messages: text, image, video, audio, document, poll, contact, list, buttons, status, pix and reaction reach B', async () => {
      const sends: [string, Record<string, unknown>, string][] = [
        ['send-image', { media: png.toString('base64'), caption: 'a red box', mimetype: 'image/png' }, 'imageMessage'],
        ['send-video', { media: mp4Header().toString('base64'), caption: 'clip' }, 'videoMessage'],
        ['send-audio', { media: toneWav().toString('base64'), mimetype: 'audio/wav', fileName: 'tone.wav' }, 'audioMessage'],
        ['send-document', { media: Buffer.from('%PDF-1.4\n%n8n\n').toString('base64'), caption: 'report', fileName: 'r.pdf' }, 'documentMessage'],
        ['send-poll', { caption: 'Lunch?', options_display: { metadataValues: [{ optionValue: 'Yes' }, { optionValue: 'No' }] } }, 'pollCreationMessage'],
        ['send-contact', { contacts: { contactValues: [{ fullName: 'Ana', wuid: '5511999990000', phoneNumber: '+55 11 99999-0000' }] } }, 'contactMessage'],
        [
          'send-list',
          {
            title: 'Menu',
            description: 'Pick one',
            buttonText: 'Open',
            sections: {
              sectionValues: [
                {
                  title: 'Food',
                  rows: {
                    rowValues: [
                      { title: 'Pizza', description: 'hot', rowId: 'pizza' },
                      { title: 'Salad', description: 'cold', rowId: 'salad' },
                    ],
                  },
                },
              ],
            },
          },
          // Sent as a poll (docs/compatibility.md: lists), so two rows at least.
          'pollCreationMessage',
        ],
        [
          'send-buttons',
          { title: 'Confirm?', description: 'Your order', footer: 'shop', buttons: { buttonValues: [{ type: 'reply', displayText: 'Yes', id: 'yes' }] } },
          '',
        ],
        ['send-pix', { name: 'Shop', keyType: 'email', key: 'pay@example.com' }, ''],
        ['send-reaction', { messageId: sentText.id, fromMe: true, reaction: '👍' }, 'reactionMessage'],
      ];
      for (const [operation, parameters, type] of sends) {
        const remoteJid = operation === 'send-reaction' ? jidOf(b) : b.number;
        const data = await run('messages-api', operation, { instanceName: a.name, remoteJid, ...parameters });
        expect(data.key?.id, `${operation}: ${JSON.stringify(data)}`).toEqual(expect.any(String));
        const upsert = await receivedByB(data.key.id);
        if (type) expect(upsert.messageType, operation).toBe(type);
      }
      const status = await run('messages-api', 'send-stories', {
        instanceName: a.name,
        type: 'text',
        content: 'status from n8n',
        allContacts: false,
        statusJidList: b.number,
      });
      expect(status.key.remoteJid).toBe('status@broadcast');
    });

    it('chat: numbers, read, presence, profile picture, media, edit, delete, archive, unread, block and the find operations', async () => {
      const checked = await run('chat-api', 'check-number', { instanceName: a.name, numbers: `${b.number}, ${a.number}` });
      expect(checked.map((c: Json) => c.exists)).toEqual([true, true]);

      const image = await run('messages-api', 'send-image', {
        instanceName: a.name,
        remoteJid: b.number,
        media: png.toString('base64'),
        caption: 'for download',
      });
      await receivedByB(image.key.id);
      const media = await run('chat-api', 'get-media-base64', { instanceName: b.name, messageId: image.key.id });
      expect(Buffer.from(media.base64, 'base64').equals(png)).toBe(true);

      const read = await run('chat-api', 'read-messages', { instanceName: b.name, remoteJid: jidOf(a), messageId: image.key.id, fromMe: false });
      expect(read).toBeTruthy();
      await rx.waitFor(() => rx.of('messages.update', a.name).some((e) => e.body.data?.keyId === image.key.id && e.body.data.status === 'READ'), 10_000);

      const presence = await run('chat-api', 'send-presence', { instanceName: a.name, remoteJid: b.number, presence: 'composing', delay: 100 });
      expect(presence).toBeTruthy();
      const picture = await run('chat-api', 'fetch-profile-picture', { instanceName: a.name, number: b.number });
      expect(picture.wuid).toBe(jidOf(b));

      const edited = await run('chat-api', 'update-message', { instanceName: a.name, remoteJid: jidOf(b), messageId: sentText.id, text: 'hello, edited' });
      expect(edited.message?.protocolMessage?.type).toBe('MESSAGE_EDIT');
      await rx.waitFor(() => rx.of('messages.edited', b.name).length > 0, 10_000);

      const doomed = await run('messages-api', 'send-text', { instanceName: a.name, remoteJid: b.number, messageText: 'to be deleted' });
      await receivedByB(doomed.key.id);
      const deleted = await run('chat-api', 'delete-message', { instanceName: a.name, remoteJid: b.number, messageId: doomed.key.id, fromMe: true });
      expect(deleted.message?.protocolMessage?.type).toBe('REVOKE');
      await rx.waitFor(() => rx.of('messages.delete', b.name).length > 0, 10_000);

      const archived = await run('chat-api', 'manage-archive', { instanceName: b.name, chat: jidOf(a), archive: true, messageId: image.key.id, fromMe: false });
      expect(archived).toMatchObject({ chatId: jidOf(a), archived: true });
      const unread = await run('chat-api', 'mark-unread', { instanceName: b.name, chat: jidOf(a), messageId: image.key.id, fromMe: false });
      expect(unread).toMatchObject({ chatId: jidOf(a), markedChatUnread: true });

      const blocked = await run('chat-api', 'block-contact', { instanceName: b.name, remoteJid: a.number, status: 'block' });
      expect(blocked).toEqual({ block: 'success' });
      const unblocked = await run('chat-api', 'block-contact', { instanceName: b.name, remoteJid: a.number, status: 'unblock' });
      expect(unblocked).toEqual({ block: 'success' });

      const messages = await run('chat-api', 'find-messages', { instanceName: a.name, remoteJid: b.number, offset: 2 });
      expect(messages.messages.records).toHaveLength(2);
      expect(messages.messages.total).toBeGreaterThan(2);
      const statuses = await run('chat-api', 'find-status-messages', { instanceName: a.name, remoteJid: b.number, messageId: image.key.id });
      expect(statuses.length).toBeGreaterThan(0);
      const chats = await run('chat-api', 'find-chats', { instanceName: b.name, remoteJid: a.number });
      expect(chats.map((c: Json) => c.remoteJid)).toEqual([jidOf(a)]);
      const all = await run('chat-api', 'find-contacts', { instanceName: b.name });
      expect(all.map((c: Json) => c.remoteJid)).toContain(jidOf(a));
      const one = await run('chat-api', 'find-contacts', { instanceName: b.name, listAll: false, remoteJid: a.number });
      expect(one.map((c: Json) => c.remoteJid)).toEqual([jidOf(a)]);
    });

    it('profile: fetch, business, name, status, picture, privacy', async () => {
      const profile = await run('profile-api', 'fetch-profile', { instanceName: a.name, remoteJid: b.number });
      expect(profile).toMatchObject({ wuid: jidOf(b), numberExists: true });
      const business = await run('profile-api', 'fetch-business-profile', { instanceName: a.name, remoteJid: b.number });
      expect(business.isBusiness).toBe(false);
      expect(await run('profile-api', 'update-profile-name', { instanceName: a.name, name: 'Alice n8n' })).toEqual({ update: 'success' });
      expect(await run('profile-api', 'update-profile-status', { instanceName: a.name, status: 'busy' })).toEqual({ update: 'success' });
      expect(await run('profile-api', 'update-profile-picture', { instanceName: a.name, picture: png.toString('base64') })).toEqual({ update: 'success' });
      const seen = await run('chat-api', 'fetch-profile-picture', { instanceName: b.name, number: a.number });
      expect(seen.profilePictureUrl).toEqual(expect.any(String));
      expect(await run('profile-api', 'remove-profile-picture', { instanceName: a.name })).toEqual({ update: 'success' });
      // The instance's own presence (an instance operation of the node, as it sends it).
      expect(await run('instances-api', 'set-presence', { instanceName: a.name, presence: 'unavailable' })).toEqual({ presence: 'unavailable' });
      const privacy = { readreceipts: 'none', profile: 'contacts', status: 'contacts', online: 'match_last_seen', last: 'none', groupadd: 'contacts' };
      await run('profile-api', 'update-privacy-settings', { instanceName: a.name, ...privacy });
      expect(await run('profile-api', 'fetch-privacy-settings', { instanceName: a.name })).toEqual(privacy);
      const renamed = await run('profile-api', 'fetch-profile', { instanceName: b.name, remoteJid: a.number });
      expect(renamed.name).toBe('Alice n8n');
    });

    it('groups: every operation, from create to leave, on sandbox groups', async () => {
      const c = await sandboxParty(t, rx, 'n8n-c', 'Carol');
      const group = await run('groups-api', 'create-group', { instanceName: a.name, subject: 'n8n group', description: 'made by n8n', participants: b.number });
      const groupJid: string = group.id;
      expect(group).toMatchObject({ subject: 'n8n group', desc: 'made by n8n', owner: `${a.number}@s.whatsapp.net`, size: 2 });
      await rx.waitFor(() => rx.of('groups.upsert', b.name).some((e) => e.body.data[0]?.id === groupJid), 10_000);

      expect(await run('groups-api', 'update-group-name', { instanceName: a.name, groupJid, subject: 'n8n group 2' })).toEqual({ update: 'success' });
      expect(await run('groups-api', 'update-group-description', { instanceName: a.name, groupJid, description: 'rules' })).toEqual({ update: 'success' });
      expect(await run('groups-api', 'update-group-picture', { instanceName: a.name, groupJid, image: png.toString('base64') })).toEqual({ update: 'success' });

      const invite = await run('groups-api', 'fetch-invite-code', { instanceName: a.name, groupJid });
      expect(invite.inviteUrl).toBe(`https://chat.whatsapp.com/${invite.inviteCode}`);
      const revoked = await run('groups-api', 'revoke-invite-code', { instanceName: a.name, groupJid });
      expect(revoked).toMatchObject({ revoked: true, inviteCode: expect.not.stringMatching(invite.inviteCode) });
      const byCode = await run('groups-api', 'fetch-groups', { instanceName: c.name, searchMethod: 'inviteCode', inviteCode: revoked.inviteCode });
      expect(byCode).toMatchObject({ id: groupJid, subject: 'n8n group 2', desc: 'rules' });
      expect(await run('groups-api', 'join-group', { instanceName: c.name, inviteCode: revoked.inviteCode })).toEqual({ accepted: true, groupJid });

      const sent = await run('groups-api', 'send-invite-link', { instanceName: a.name, groupJid, description: 'join us', numbers: `${b.number}, ${c.number}` });
      expect(sent).toEqual({ send: true, inviteUrl: `https://chat.whatsapp.com/${revoked.inviteCode}` });
      await rx.waitFor(() => rx.of('messages.upsert', c.name).some((e) => e.body.data.message?.conversation?.endsWith(sent.inviteUrl)), 10_000);

      const byJid = await run('groups-api', 'fetch-groups', { instanceName: b.name, searchMethod: 'groupJid', groupJid });
      expect(byJid).toMatchObject({ id: groupJid, size: 3, pictureUrl: expect.any(String) });
      const all = await run('groups-api', 'fetch-groups', { instanceName: b.name, searchMethod: 'fetchAll', getParticipants: true });
      expect(all.find((g: Json) => g.id === groupJid).participants).toHaveLength(3);
      const participants = await run('groups-api', 'find-participants', { instanceName: b.name, groupJid });
      expect(participants.participants.map((p: Json) => p.id)).toEqual([a.number, b.number, c.number].map((n) => `${n}@s.whatsapp.net`));

      for (const action of ['promote', 'demote', 'remove', 'add']) {
        const changed = await run('groups-api', 'update-participants', { instanceName: a.name, groupJid, action, participants: c.number });
        expect(changed.updateParticipants, action).toEqual([expect.objectContaining({ status: '200', jid: `${c.number}@s.whatsapp.net` })]);
      }
      for (const action of ['announcement', 'not_announcement', 'locked', 'unlocked']) {
        expect(await run('groups-api', 'update-settings', { instanceName: a.name, groupJid, action }), action).toEqual({});
      }
      expect(await run('groups-api', 'toggle-ephemeral', { instanceName: a.name, groupJid, expiration: 86400 })).toEqual({ success: true });
      await rx.waitFor(() => rx.of('groups.update', c.name).some((e) => e.body.data[0]?.ephemeralDuration === 86400), 10_000);
      expect(await run('groups-api', 'leave-group', { instanceName: c.name, groupJid })).toEqual({ groupJid, leave: true });
      await rx.waitFor(
        () => rx.of('group-participants.update', a.name).some((e) => e.body.data.action === 'remove' && e.body.data.author === `${c.number}@s.whatsapp.net`),
        10_000,
      );
    });
  });
});
