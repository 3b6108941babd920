// sendLocation, sendContact and sendReaction over HTTP on both stores: the 201 records, the upserts a sandbox pair
// exchanges (events at a real HTTP receiver), the validation 400s, and "Method not available" on EVOLUTION.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentToJson, inboundContent, jsonToContent } from '../../src/connectors/whatsapp-web/content.js';
import { contactContent, locationContent, reactionContent } from '../../src/messages/compose.js';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { uniqueName } from '../support/unique.js';
import { expect400 } from '../support/answers.js';
import { sandboxParty as party, type Party } from '../support/sandbox-party.js';

const targets = await storeTargets();

// biome-ignore lint/suspicious/noExplicitAny: answers and event data are read field by field
type Json = any;

async function upsertOn(rx: Receiver, instance: string, keyId: string): Promise<Json> {
  await rx.waitFor(() => rx.of('messages.upsert', instance).some((e) => e.body.data?.key?.id === keyId), 10_000);
  return rx.of('messages.upsert', instance).find((e) => e.body.data.key.id === keyId)!.body.data;
}

describe('location, contact and reaction content for WhatsApp Web', () => {
  it('turns into the protobuf message and back, typed as upstream', () => {
    const cases = [
      locationContent({ latitude: 52.52, longitude: 13.405, name: 'Shop', address: 'Main St 1' }, { stanzaId: 'ABC' }),
      contactContent([{ fullName: 'Ana', phoneNumber: '+55 11 99999-0000' }], undefined),
      contactContent(
        [
          { fullName: 'Ana', phoneNumber: '+55 11 99999-0000' },
          { fullName: 'Bo', phoneNumber: '+49 151 0000 0001', wuid: '4915100000001' },
        ],
        undefined,
      ),
      reactionContent({ remoteJid: '4915100000001@s.whatsapp.net', fromMe: true, id: 'ABC' }, '👍🏽'),
    ];
    for (const { messageType, content } of cases) {
      const proto = jsonToContent(content);
      expect(contentToJson(proto)).toEqual(content);
      expect(inboundContent(proto)?.messageType).toBe(messageType);
    }
    expect(jsonToContent(cases[3].content).reactionMessage?.key?.id).toBe('ABC');
  });
});

describe.each(targets)('location, contact and reaction over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox sends (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a = await party(t, rx, 'lcr-a');
      b = await party(t, rx, 'lcr-b');
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    it('sendLocation answers 201 with a locationMessage record, and B receives it', async () => {
      const res = await t.api('POST', `message/sendLocation/${a.name}`, {
        body: { number: b.number, latitude: 52.52, longitude: 13.405, name: 'Shop', address: 'Main St 1' },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({
        key: { remoteJid: b.owner, fromMe: true, id: expect.any(String) },
        messageType: 'locationMessage',
        message: { locationMessage: { degreesLatitude: 52.52, degreesLongitude: 13.405, name: 'Shop', address: 'Main St 1' } },
        status: 'PENDING',
      });
      const upsert = await upsertOn(rx, b.name, res.body.key.id);
      expect(upsert).toMatchObject({
        key: { remoteJid: a.owner, fromMe: false },
        messageType: 'locationMessage',
        message: { locationMessage: { degreesLatitude: 52.52, degreesLongitude: 13.405, name: 'Shop', address: 'Main St 1' } },
      });
    });

    it('sendLocation takes quoted (as contextInfo) and Idempotency-Key', async () => {
      const first = await t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: 'where?' } });
      expect(first.status).toBe(201);
      const body = { number: b.number, latitude: -23.5, longitude: -46.6, name: '', address: '', quoted: { key: { id: first.body.key.id } } };
      const headers = { 'Idempotency-Key': uniqueName('idem') };
      const res = await t.api('POST', `message/sendLocation/${a.name}`, { body, headers });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.message.locationMessage.contextInfo).toMatchObject({ stanzaId: first.body.key.id, quotedMessage: { conversation: 'where?' } });
      const again = await t.api('POST', `message/sendLocation/${a.name}`, { body, headers });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.key.id).toBe(res.body.key.id);
    });

    it('sendContact answers 201 with a contactMessage (one card) or contactsArrayMessage (several), and B receives them', async () => {
      const one = await t.api('POST', `message/sendContact/${a.name}`, {
        body: {
          number: b.number,
          contact: [{ fullName: 'Ana Lima', phoneNumber: '+55 11 99999-0000', organization: 'Acme', email: 'ana@example.com', url: 'https://ana.example' }],
        },
      });
      expect(one.status, JSON.stringify(one.body)).toBe(201);
      expect(one.body.messageType).toBe('contactMessage');
      expect(one.body.message.contactMessage.displayName).toBe('Ana Lima');
      expect(one.body.message.contactMessage.vcard).toBe(
        [
          'BEGIN:VCARD',
          'VERSION:3.0',
          'N:Ana Lima',
          'FN:Ana Lima',
          'ORG:Acme;',
          'EMAIL:ana@example.com',
          'URL:https://ana.example',
          // waid is the bare number (upstream writes a full address here when wuid is absent).
          'item1.TEL;waid=5511999990000:+55 11 99999-0000',
          'item1.X-ABLabel:Celular',
          'END:VCARD',
        ].join('\n'),
      );
      const upsertOne = await upsertOn(rx, b.name, one.body.key.id);
      expect(upsertOne).toMatchObject({ messageType: 'contactMessage', message: { contactMessage: { displayName: 'Ana Lima' } } });

      const two = await t.api('POST', `message/sendContact/${a.name}`, {
        body: {
          number: b.number,
          contact: [
            { fullName: 'Ana', phoneNumber: '+55 11 99999-0000' },
            { fullName: 'Bo', phoneNumber: '+49 151 0000 0001', wuid: '4915100000001@s.whatsapp.net' },
          ],
        },
      });
      expect(two.status, JSON.stringify(two.body)).toBe(201);
      expect(two.body.messageType).toBe('contactsArrayMessage');
      const array = two.body.message.contactsArrayMessage;
      expect(array.displayName).toBe('2 contacts');
      expect(array.contacts.map((c: Json) => c.displayName)).toEqual(['Ana', 'Bo']);
      expect(array.contacts[1].vcard).toContain('item1.TEL;waid=4915100000001:+49 151 0000 0001');
      const upsertTwo = await upsertOn(rx, b.name, two.body.key.id);
      expect(upsertTwo.messageType).toBe('contactsArrayMessage');
      expect(upsertTwo.message.contactsArrayMessage.contacts).toHaveLength(2);
    });

    it('sendReaction answers 201 with a reactionMessage; B sees the key from its side; an empty reaction removes it', async () => {
      const text = await t.api('POST', `message/sendText/${b.name}`, { body: { number: a.number, text: 'react to this' } });
      expect(text.status).toBe(201);
      const target = { remoteJid: b.owner, fromMe: false, id: text.body.key.id };
      await upsertOn(rx, a.name, target.id);

      const res = await t.api('POST', `message/sendReaction/${a.name}`, { body: { key: target, reaction: '👍' } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({
        key: { remoteJid: b.owner, fromMe: true, id: expect.any(String) },
        messageType: 'reactionMessage',
        message: { reactionMessage: { key: target, text: '👍', senderTimestampMs: expect.stringMatching(/^\d+$/) } },
        status: 'PENDING',
      });
      const upsert = await upsertOn(rx, b.name, res.body.key.id);
      expect(upsert.messageType).toBe('reactionMessage');
      // B wrote the message reacted to: from B's side it is its own, in its chat with A.
      expect(upsert.message.reactionMessage).toMatchObject({ key: { remoteJid: a.owner, fromMe: true, id: target.id }, text: '👍' });

      const removed = await t.api('POST', `message/sendReaction/${a.name}`, { body: { key: target, reaction: '' } });
      expect(removed.status, JSON.stringify(removed.body)).toBe(201);
      const removal = await upsertOn(rx, b.name, removed.body.key.id);
      expect(removal.message.reactionMessage.text ?? '').toBe('');

      // Reacting to one's own message: the recipient sees it as the other side's message.
      const own = await t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: 'mine' } });
      const selfReaction = await t.api('POST', `message/sendReaction/${a.name}`, {
        body: { key: { remoteJid: b.number, fromMe: true, id: own.body.key.id }, reaction: '👨‍👩‍👧' },
      });
      expect(selfReaction.status, JSON.stringify(selfReaction.body)).toBe(201);
      expect(selfReaction.body.message.reactionMessage.key.remoteJid).toBe(b.owner);
      const seen = await upsertOn(rx, b.name, selfReaction.body.key.id);
      expect(seen.message.reactionMessage.key).toMatchObject({ remoteJid: a.owner, fromMe: false, id: own.body.key.id });
    });

    it('answers the validation 400s with messages naming the field', async () => {
      const location = (body: Record<string, unknown>) => t.api('POST', `message/sendLocation/${a.name}`, { body });
      const place = { number: b.number, latitude: 1, longitude: 2, name: 'n', address: 'a' };
      expect400(await location({ ...place, latitude: undefined }), 'latitude is required');
      expect400(await location({ ...place, name: undefined }), 'name is required');
      expect400(await location({ ...place, address: undefined }), 'address is required');
      expect400(await location({ ...place, latitude: '1' }), 'latitude must be a number');
      expect400(await location({ ...place, latitude: 91 }), 'latitude must be at most 90');
      expect400(await location({ ...place, longitude: -181 }), 'longitude must be at least -180');
      expect400(await location({ ...place, delay: 300001 }), 'delay must be at most 300000');

      const contact = (body: Record<string, unknown>) => t.api('POST', `message/sendContact/${a.name}`, { body: { number: b.number, ...body } });
      const card = { fullName: 'Ana', phoneNumber: '+55 11 99999-0000' };
      expect400(await contact({}), 'contact is required');
      expect400(await contact({ contact: [] }), 'contact must have at least 1 item');
      expect400(await contact({ contact: [card, card] }), 'contact must not contain duplicates');
      expect400(await contact({ contact: [{ phoneNumber: card.phoneNumber }] }), 'contact[0].fullName is required');
      expect400(await contact({ contact: [{ fullName: 'Ana', phoneNumber: '12345' }] }), 'contact[0].phoneNumber must be at least 10 characters');
      expect400(await contact({ contact: [{ ...card, wuid: 'abcdefghijk' }] }), /contact\[0\]\.wuid must be the contact's WhatsApp number/);
      expect400(await contact({ contact: [{ ...card, fullName: 'Ana\nEND:VCARD' }] }), 'contact[0].fullName must be one line');

      const reaction = (body: Record<string, unknown>) => t.api('POST', `message/sendReaction/${a.name}`, { body });
      const key = { remoteJid: b.owner, fromMe: false, id: 'ABCDEF' };
      expect400(await reaction({ reaction: '👍' }), 'key is required');
      expect400(await reaction({ key: { remoteJid: b.owner, fromMe: false }, reaction: '👍' }), 'key.id is required');
      expect400(await reaction({ key: { id: 'X', fromMe: false }, reaction: '👍' }), 'key.remoteJid is required');
      expect400(await reaction({ key: { id: 'X', remoteJid: b.owner }, reaction: '👍' }), 'key.fromMe is required');
      expect400(await reaction({ key }), 'reaction is required');
      expect400(await reaction({ key, reaction: 'ok' }), 'Reaction must be a single emoji or empty string');
      expect400(await reaction({ key, reaction: '👍👍' }), 'Reaction must be a single emoji or empty string');
      expect400(await reaction({ key: { ...key, remoteJid: 'status@broadcast' }, reaction: '👍' }), /key\.remoteJid status@broadcast is the status feed/);
    });

    it('answers 400 "Method not available" on an EVOLUTION instance (as upstream)', async () => {
      const name = uniqueName('lcr-evo');
      const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'EVOLUTION' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect400(
        await t.api('POST', `message/sendLocation/${name}`, { body: { number: b.number, latitude: 1, longitude: 2, name: '', address: '' } }),
        'Method not available on Evolution Channel (integration EVOLUTION cannot do location)',
      );
      expect400(
        await t.api('POST', `message/sendContact/${name}`, { body: { number: b.number, contact: [{ fullName: 'Ana', phoneNumber: '+55 11 99999-0000' }] } }),
        'Method not available on Evolution Channel (integration EVOLUTION cannot do contact)',
      );
      expect400(
        await t.api('POST', `message/sendReaction/${name}`, { body: { key: { remoteJid: b.owner, fromMe: false, id: 'X' }, reaction: '👍' } }),
        'Method not available on Evolution Channel (integration EVOLUTION cannot do reaction)',
      );
    });
  });
});
