// Both addresses of a person (the phone one and the @lid one) over HTTP on both stores: a send to either form arrives,
// and every answer and event that carries one of them carries the other (sandbox accounts have both, as on WhatsApp).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { sandboxParty as party, type Party } from '../support/sandbox-party.js';

const targets = await storeTargets();

// biome-ignore lint/suspicious/noExplicitAny: answers and event data are read field by field
type Json = any;

describe.each(targets)('@lid and phone addresses on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox accounts (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    const lids: Record<string, string> = {};
    const upsertOn = async (instance: string, keyId: string): Promise<Json> => {
      await rx.waitFor(() => rx.of('messages.upsert', instance).some((e) => e.body.data?.key?.id === keyId), 10_000);
      return rx.of('messages.upsert', instance).find((e) => e.body.data.key.id === keyId)!.body.data;
    };
    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a = await party(t, rx, 'lid-a');
      b = await party(t, rx, 'lid-b');
      const numbers = await t.api('POST', `chat/whatsappNumbers/${a.name}`, { body: { numbers: [a.number, b.number] } });
      expect(numbers.status, JSON.stringify(numbers.body)).toBe(200);
      lids[a.owner] = numbers.body[0].lid;
      lids[b.owner] = numbers.body[1].lid;
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    it('whatsappNumbers answers both addresses for a number and for an @lid address, the input echoed', async () => {
      expect(lids[a.owner]).toMatch(/^\d{15}@lid$/);
      expect(lids[b.owner]).toMatch(/^\d{15}@lid$/);
      expect(lids[a.owner]).not.toBe(lids[b.owner]);
      const res = await t.api('POST', `chat/whatsappNumbers/${a.name}`, { body: { numbers: [lids[b.owner], '100000000000001@lid'] } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body[0]).toEqual({ exists: true, jid: b.owner, number: lids[b.owner], name: b.name, lid: lids[b.owner] });
      expect(res.body[1]).toMatchObject({ exists: false, number: '100000000000001@lid' });
    });

    it('a send to the @lid address arrives; answer, upsert and status events carry both addresses', async () => {
      const sent = await t.api('POST', `message/sendText/${a.name}`, { body: { number: lids[b.owner], text: 'to your lid' } });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      expect(sent.body.key).toMatchObject({ remoteJid: lids[b.owner], remoteJidAlt: b.owner, fromMe: true });
      const received = await upsertOn(b.name, sent.body.key.id);
      expect(received.key).toEqual({ remoteJid: a.owner, remoteJidAlt: lids[a.owner], fromMe: false, id: sent.body.key.id });
      await rx.waitFor(
        () => rx.of('messages.update', a.name).some((e) => e.body.data?.keyId === sent.body.key.id && e.body.data.status === 'DELIVERY_ACK'),
        10_000,
      );
      const update = rx.of('messages.update', a.name).find((e) => e.body.data.keyId === sent.body.key.id && e.body.data.status === 'DELIVERY_ACK')!;
      expect(update.body.data).toMatchObject({ remoteJid: lids[b.owner], remoteJidAlt: b.owner });
      const leaving = rx.of('send.message', a.name).find((e) => e.body.data?.key?.id === sent.body.key.id);
      expect(leaving?.body.data.key).toMatchObject({ remoteJid: lids[b.owner], remoteJidAlt: b.owner });
    });

    it('a send to the phone address carries the @lid one beside it; a reply to the sender by @lid reaches it', async () => {
      const sent = await t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: 'to your number' } });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      expect(sent.body.key).toMatchObject({ remoteJid: b.owner, remoteJidAlt: lids[b.owner] });
      const received = await upsertOn(b.name, sent.body.key.id);
      const reply = await t.api('POST', `message/sendText/${b.name}`, {
        body: { number: received.key.remoteJidAlt, text: 'back to your lid', quoted: { key: { id: received.key.id } } },
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(201);
      const back = await upsertOn(a.name, reply.body.key.id);
      expect(back.key).toMatchObject({ remoteJid: b.owner, remoteJidAlt: lids[b.owner] });
      expect(back.message.extendedTextMessage.text).toBe('back to your lid');
    });

    it('a number of no account has no @lid address', async () => {
      const sent = await t.api('POST', `message/sendText/${a.name}`, { body: { number: '4930123456789', text: 'nobody' } });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      expect(sent.body.key.remoteJidAlt).toBeUndefined();
    });
  });
});
