// deleteMessageForEveryone and updateMessage over HTTP on both stores: the answers, the stored rows and status
// history, the events both sandbox parties receive, every 400 before anything is sent, and "Method not available".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { uniqueName } from '../support/unique.js';
import { expect400 } from '../support/answers.js';
import { sandboxParty as party, type Party } from '../support/sandbox-party.js';
import { waitFor } from '../support/wait.js';

const targets = await storeTargets();

// biome-ignore lint/suspicious/noExplicitAny: answers and event data are read field by field
type Json = any;

describe.each(targets)('edits and deletions for everyone over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a = await party(t, rx, 'ed-a');
      b = await party(t, rx, 'ed-b');
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    const stored = (keyId: string, fromMe: boolean) =>
      t.services.store.db
        .selectFrom('messages')
        .selectAll()
        .where('key_id', '=', keyId)
        .where('from_me', '=', fromMe ? 1 : 0)
        .executeTakeFirstOrThrow();
    const history = async (keyId: string, fromMe: boolean) => {
      const row = await stored(keyId, fromMe);
      const rows = await t.services.store.db.selectFrom('message_status').select('status').where('message_id', '=', row.id).orderBy('id').execute();
      return rows.map((r) => r.status);
    };

    /** A text from A to B, received by B and acknowledged for A. */
    async function sentText(text: string): Promise<string> {
      const res = await t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const id: string = res.body.key.id;
      await rx.waitFor(() => rx.of('messages.upsert', b.name).some((e) => e.body.data.key.id === id), 10_000);
      await waitFor(async () => (await stored(id, true)).status !== 'PENDING', 10_000);
      return id;
    }

    it('deletes an own message for everyone: 201 with the revoke, DELETED on both sides, messages.delete to both', async () => {
      const id = await sentText('to be deleted');
      const res = await t.api('DELETE', `chat/deleteMessageForEveryone/${a.name}`, { body: { id, remoteJid: b.owner, fromMe: true } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toEqual({
        key: { remoteJid: b.owner, fromMe: true, id: expect.any(String) },
        message: { protocolMessage: { key: { remoteJid: b.owner, fromMe: true, id }, type: 'REVOKE' } },
        messageTimestamp: expect.stringMatching(/^\d+$/),
        status: 'PENDING',
      });
      expect(res.body.key.id).not.toBe(id);
      expect((await stored(id, true)).status).toBe('DELETED');
      expect((await history(id, true)).at(-1)).toBe('DELETED');

      await rx.waitFor(() => rx.of('messages.delete', a.name).some((e) => e.body.data.id === id), 10_000);
      const own: Json = rx.of('messages.delete', a.name).find((e) => e.body.data.id === id)!.body.data;
      expect(own).toMatchObject({
        remoteJid: b.owner,
        fromMe: true,
        id,
        key: { remoteJid: b.owner, fromMe: true, id },
        status: 'DELETED',
        message: { conversation: 'to be deleted' },
      });

      await rx.waitFor(() => rx.of('messages.delete', b.name).some((e) => e.body.data.id === id), 10_000);
      const theirs: Json = rx.of('messages.delete', b.name).find((e) => e.body.data.id === id)!.body.data;
      expect(theirs).toMatchObject({ remoteJid: a.owner, fromMe: false, id, key: { remoteJid: a.owner, fromMe: false, id }, status: 'DELETED' });
      await waitFor(async () => (await stored(id, false)).status === 'DELETED', 10_000);
      expect((await history(id, false)).at(-1)).toBe('DELETED');
      // A deletion is never announced as an edit (upstream emits messages.edited for revokes too).
      expect(rx.of('messages.edited').filter((e) => e.body.data?.key?.id === id)).toEqual([]);

      expect400(
        await t.api('DELETE', `chat/deleteMessageForEveryone/${a.name}`, { body: { id, remoteJid: b.owner, fromMe: true } }),
        `message ${id} is already deleted`,
      );
    });

    it('refuses deletions it cannot do with a 400 (404 for an unknown message), before anything is sent', async () => {
      const id = await sentText('stays');
      const path = `chat/deleteMessageForEveryone/${a.name}`;
      expect400(await t.api('DELETE', path, { body: { id, remoteJid: b.owner } }), 'fromMe is required');
      expect400(await t.api('DELETE', path, { body: { remoteJid: b.owner, fromMe: true } }), 'id is required');
      expect400(await t.api('DELETE', path, { body: { id, remoteJid: b.owner, fromMe: false } }), /only messages this instance sent can be deleted/);
      expect400(await t.api('DELETE', path, { body: { id, remoteJid: a.owner, fromMe: true } }), /RemoteJid does not match/);
      const missing = await t.api('DELETE', path, { body: { id: 'NOPE', remoteJid: b.owner, fromMe: true } });
      expect(missing.status, JSON.stringify(missing.body)).toBe(404);
      expect(missing.body.response.message.join()).toMatch(/Message not found/);
      expect((await stored(id, true)).status).not.toBe('DELETED');
      expect(rx.of('messages.delete').filter((e) => e.body.data?.id === id)).toEqual([]);
    });

    it('edits an own text: 200 with the edit, text replaced and EDITED, send.message.update to A and messages.edited to B', async () => {
      const id = await sentText('helo');
      const res = await t.api('POST', `chat/updateMessage/${a.name}`, {
        body: { number: b.number, text: 'hello', key: { id, remoteJid: b.owner, fromMe: true } },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({
        key: { remoteJid: b.owner, fromMe: true, id: expect.any(String) },
        message: {
          protocolMessage: {
            key: { remoteJid: b.owner, fromMe: true, id },
            type: 'MESSAGE_EDIT',
            editedMessage: { conversation: 'hello' },
            timestampMs: expect.stringMatching(/^\d+$/),
          },
        },
        messageTimestamp: expect.stringMatching(/^\d+$/),
        status: 'PENDING',
      });
      const row = await stored(id, true);
      expect(row.status).toBe('EDITED');
      expect(JSON.parse(row.content)).toMatchObject({ conversation: 'hello' });
      expect((await history(id, true)).at(-1)).toBe('EDITED');

      await rx.waitFor(() => rx.of('send.message.update', a.name).some((e) => e.body.data.key.id === id), 10_000);
      expect(rx.of('send.message.update', a.name).find((e) => e.body.data.key.id === id)!.body.data).toEqual(res.body.message.protocolMessage);

      await rx.waitFor(() => rx.of('messages.edited', b.name).some((e) => e.body.data.key.id === id), 10_000);
      expect(rx.of('messages.edited', b.name).find((e) => e.body.data.key.id === id)!.body.data).toMatchObject({
        key: { remoteJid: a.owner, fromMe: false, id },
        type: 'MESSAGE_EDIT',
        editedMessage: { conversation: 'hello' },
      });
      const theirs = await stored(id, false);
      expect(theirs.status).toBe('EDITED');
      expect(JSON.parse(theirs.content)).toMatchObject({ conversation: 'hello' });
    });

    it('refuses edits it cannot do with a clear 400 before anything is sent', async () => {
      const id = await sentText('original');
      const path = `chat/updateMessage/${a.name}`;
      const key = { id, remoteJid: b.owner, fromMe: true };
      expect400(await t.api('POST', path, { body: { number: b.number, key } }), 'text is required');
      expect400(await t.api('POST', path, { body: { text: 'x', key } }), 'number is required');
      expect400(await t.api('POST', path, { body: { number: b.number, text: 'x' } }), 'key is required');
      expect400(await t.api('POST', path, { body: { number: b.number, text: 'x', key: { ...key, fromMe: false } } }), /You cannot edit others' messages/);
      expect400(await t.api('POST', path, { body: { number: a.number, text: 'x', key } }), /RemoteJid does not match/);
      const missing = await t.api('POST', path, { body: { number: b.number, text: 'x', key: { ...key, id: 'NOPE' } } });
      expect(missing.status).toBe(404);

      // Media messages are not edited.
      const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
      const media = await t.api('POST', `message/sendMedia/${a.name}`, { body: { number: b.number, mediatype: 'image', media: png.toString('base64') } });
      expect(media.status, JSON.stringify(media.body)).toBe(201);
      await waitFor(async () => (await stored(media.body.key.id, true)).status !== 'PENDING', 10_000);
      expect400(await t.api('POST', path, { body: { number: b.number, text: 'x', key: { ...key, id: media.body.key.id } } }), /Message not compatible/);

      // WhatsApp's 15 minutes, counted in the same unit on both sides (upstream compares seconds with milliseconds).
      const old = await sentText('too old');
      await t.services.store.db
        .updateTable('messages')
        .set({ message_timestamp: Math.floor(Date.now() / 1000) - 16 * 60 })
        .where('key_id', '=', old)
        .where('from_me', '=', 1)
        .execute();
      expect400(await t.api('POST', path, { body: { number: b.number, text: 'x', key: { ...key, id: old } } }), /can be edited for 15 minutes/);

      // Deleted messages are not edited.
      const gone = await sentText('gone');
      expect((await t.api('DELETE', `chat/deleteMessageForEveryone/${a.name}`, { body: { id: gone, remoteJid: b.owner, fromMe: true } })).status).toBe(201);
      expect400(await t.api('POST', path, { body: { number: b.number, text: 'x', key: { ...key, id: gone } } }), 'You cannot edit deleted messages');

      expect((await stored(id, true)).status).not.toBe('EDITED');
      expect(rx.of('send.message.update').filter((e) => [id, old, gone, media.body.key.id].includes(e.body.data?.key?.id))).toEqual([]);
    });

    it('answers 400 "Method not available" on an EVOLUTION instance', async () => {
      const name = uniqueName('ed-evo');
      expect((await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'EVOLUTION' } })).status).toBe(201);
      expect400(
        await t.api('DELETE', `chat/deleteMessageForEveryone/${name}`, { body: { id: 'X', remoteJid: b.owner, fromMe: true } }),
        'Method not available on Evolution Channel (integration EVOLUTION cannot do revoke)',
      );
      expect400(
        await t.api('POST', `chat/updateMessage/${name}`, { body: { number: b.number, text: 'x', key: { id: 'X', remoteJid: b.owner, fromMe: true } } }),
        'Method not available on Evolution Channel (integration EVOLUTION cannot do edit)',
      );
    });
  });
});
