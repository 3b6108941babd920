// updateBlockStatus over HTTP on both stores: blocks stop delivery in the sandbox (the sender sees SERVER_ACK only),
// unblocking restores it, and every bad request is a 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { uniqueName } from '../support/unique.js';
import { expect400 } from '../support/answers.js';
import { sandboxParty as party, type Party } from '../support/sandbox-party.js';
import { sleep, waitFor } from '../support/wait.js';

const targets = await storeTargets();

describe.each(targets)('updateBlockStatus over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a = await party(t, rx, 'blk-a');
      b = await party(t, rx, 'blk-b');
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    const statusOf = async (keyId: string) =>
      (await t.services.store.db.selectFrom('messages').select('status').where('key_id', '=', keyId).where('from_me', '=', 1).executeTakeFirstOrThrow()).status;
    const send = async (text: string): Promise<string> => {
      const res = await t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.key.id;
    };
    const receivedByB = (id: string) => rx.of('messages.upsert', b.name).some((e) => e.body.data.key.id === id);

    it('a blocked sender reaches the server only; unblocking lets the next messages through', async () => {
      const block = await t.api('POST', `chat/updateBlockStatus/${b.name}`, { body: { number: a.number, status: 'block' } });
      expect(block.status, JSON.stringify(block.body)).toBe(201);
      expect(block.body).toEqual({ block: 'success' });
      const rows = await t.services.store.db.selectFrom('sandbox_blocks').selectAll().execute();
      expect(rows.map((r) => r.jid)).toContain(a.owner);

      const blocked = await send('you will not see this');
      await waitFor(async () => (await statusOf(blocked)) === 'SERVER_ACK', 10_000);
      await sleep(300);
      expect(await statusOf(blocked)).toBe('SERVER_ACK');
      expect(receivedByB(blocked)).toBe(false);

      const unblock = await t.api('POST', `chat/updateBlockStatus/${b.name}`, { body: { number: a.owner, status: 'unblock' } });
      expect(unblock.status).toBe(201);
      expect(unblock.body).toEqual({ block: 'success' });
      const through = await send('now you do');
      await rx.waitFor(() => receivedByB(through), 10_000);
      await waitFor(async () => (await statusOf(through)) === 'DELIVERY_ACK', 10_000);
      expect(receivedByB(blocked)).toBe(false);
    });

    it('blocking only stops messages to the blocker: the blocker still reaches the blocked account', async () => {
      expect((await t.api('POST', `chat/updateBlockStatus/${b.name}`, { body: { number: a.number, status: 'block' } })).status).toBe(201);
      const res = await t.api('POST', `message/sendText/${b.name}`, { body: { number: a.number, text: 'from the blocker' } });
      expect(res.status).toBe(201);
      await rx.waitFor(() => rx.of('messages.upsert', a.name).some((e) => e.body.data.key.id === res.body.key.id), 10_000);
      expect((await t.api('POST', `chat/updateBlockStatus/${b.name}`, { body: { number: a.number, status: 'unblock' } })).status).toBe(201);
    });

    it('answers clear 400s for bad requests and "Method not available" on EVOLUTION', async () => {
      const path = `chat/updateBlockStatus/${b.name}`;
      expect400(await t.api('POST', path, { body: { status: 'block' } }), 'number is required');
      expect400(await t.api('POST', path, { body: { number: a.number } }), 'status is required');
      expect400(await t.api('POST', path, { body: { number: a.number, status: 'mute' } }), 'status must be one of: block, unblock');
      expect400(await t.api('POST', path, { body: { number: '120363000000000000@g.us', status: 'block' } }), /is not a person/);
      expect400(await t.api('POST', path, { body: { number: 'abc', status: 'block' } }), /number must be a phone number/);
      const name = uniqueName('blk-evo');
      expect((await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'EVOLUTION' } })).status).toBe(201);
      expect400(
        await t.api('POST', `chat/updateBlockStatus/${name}`, { body: { number: a.number, status: 'block' } }),
        'Method not available on Evolution Channel (integration EVOLUTION cannot do blocking)',
      );
    });
  });
});
