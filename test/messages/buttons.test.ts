// sendButtons over HTTP on both stores: the 201 record (a view-once native-flow message), delivery to another sandbox
// instance (events at a real HTTP receiver), Evolution's rules and each button's fields as 400s, "Method not available".
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentToJson, inboundContent, jsonToContent } from '../../src/connectors/whatsapp-web/content.js';
import { buttonsContent } from '../../src/messages/buttons.js';
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

const interactiveOf = (message: Json) => message.viewOnceMessage.message.interactiveMessage;
const flowButtons = (message: Json) =>
  interactiveOf(message).nativeFlowMessage.buttons.map((b: Json) => ({ name: b.name, params: JSON.parse(b.buttonParamsJson) }));

describe('buttons content for WhatsApp Web', () => {
  it('turns into the protobuf message and back (a view-once interactive message)', () => {
    const built = buttonsContent(
      { title: 'Pay', description: 'Your order', footer: 'Thanks', buttons: [{ type: 'url', displayText: 'Open', url: 'https://shop.example' }] },
      { contextInfo: { stanzaId: 'ABC' } },
    );
    const proto = jsonToContent(built.content);
    expect(contentToJson(proto)).toEqual(built.content);
    expect(proto.viewOnceMessage?.message?.interactiveMessage?.nativeFlowMessage?.buttons?.[0]?.name).toBe('cta_url');
    expect(proto.viewOnceMessage?.message?.interactiveMessage?.contextInfo?.stanzaId).toBe('ABC');
    expect(inboundContent(proto)?.messageType).toBe('interactiveMessage');
  });
});

describe.each(targets)('sendButtons over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox sends (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a = await party(t, rx, 'btn-a');
      b = await party(t, rx, 'btn-b');
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    const send = (body: Record<string, unknown>, headers?: Record<string, string>) =>
      t.api('POST', `message/sendButtons/${a.name}`, { body: { number: b.number, ...body }, ...(headers ? { headers } : {}) });

    it('answers 201 with a viewOnceMessage record of reply buttons, and B receives the interactive message', async () => {
      const res = await send({
        title: 'Your order',
        description: 'Confirm it?',
        footer: 'Shop',
        buttons: [
          { type: 'reply', displayText: 'Yes', id: 'yes' },
          { type: 'reply', displayText: 'No', id: 'no' },
        ],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({
        key: { remoteJid: b.owner, fromMe: true, id: expect.any(String) },
        messageType: 'viewOnceMessage',
        status: 'PENDING',
      });
      expect(interactiveOf(res.body.message)).toMatchObject({ body: { text: '*Your order*\n\nConfirm it?\n' }, footer: { text: 'Shop' } });
      expect(flowButtons(res.body.message)).toEqual([
        { name: 'quick_reply', params: { display_text: 'Yes', id: 'yes' } },
        { name: 'quick_reply', params: { display_text: 'No', id: 'no' } },
      ]);
      expect(JSON.parse(interactiveOf(res.body.message).nativeFlowMessage.messageParamsJson)).toEqual({ from: 'api', templateId: expect.any(String) });

      const upsert = await upsertOn(rx, b.name, res.body.key.id);
      expect(upsert).toMatchObject({ key: { remoteJid: a.owner, fromMe: false }, messageType: 'viewOnceMessage' });
      expect(flowButtons(upsert.message)).toEqual(flowButtons(res.body.message));

      // B presses "No": A receives the interactive response quoting its message; B has it as its own.
      const pressed = await t.api('POST', `sandbox/press/${b.name}`, { body: { keyId: res.body.key.id, buttonId: 'no' } });
      expect(pressed.status, JSON.stringify(pressed.body)).toBe(201);
      expect(pressed.body).toMatchObject({ key: { remoteJid: a.owner, fromMe: true }, messageType: 'interactiveResponseMessage' });
      const answer = await upsertOn(rx, a.name, pressed.body.key.id);
      expect(answer).toMatchObject({ key: { remoteJid: b.owner, fromMe: false }, messageType: 'interactiveResponseMessage' });
      expect(answer.message.interactiveResponseMessage).toMatchObject({
        body: { text: 'No' },
        nativeFlowResponseMessage: { name: 'quick_reply', paramsJson: JSON.stringify({ id: 'no' }) },
        contextInfo: { stanzaId: res.body.key.id },
      });
      const own = await upsertOn(rx, b.name, pressed.body.key.id);
      expect(own.key).toMatchObject({ remoteJid: a.owner, fromMe: true });
      expect400(
        await t.api('POST', `sandbox/press/${b.name}`, { body: { keyId: res.body.key.id, buttonId: 'maybe' } }),
        "buttonId must be the id of one of the message's reply buttons: yes, no",
      );
      expect400(await t.api('POST', `sandbox/press/${b.name}`, { body: { keyId: 'UNKNOWN', buttonId: 'no' } }), /is not a message instance .* received/);
      expect400(await t.api('POST', `sandbox/press/${a.name}`, { body: { keyId: res.body.key.id, buttonId: 'no' } }), /is not a message instance .* received/);
    });

    it('maps copy, url and call buttons; an image header from thumbnailUrl; quoted as contextInfo; Idempotency-Key', async () => {
      const first = await t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: 'how can I pay?' } });
      expect(first.status).toBe(201);
      const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#336699' } })
        .png()
        .toBuffer();
      const body = {
        title: 'Payment',
        thumbnailUrl: png.toString('base64'),
        quoted: { key: { id: first.body.key.id } },
        buttons: [
          { type: 'copy', displayText: 'Copy code', copyCode: 'ABC-123' },
          { type: 'url', displayText: 'Open shop', url: 'https://shop.example/pay' },
          { type: 'call', displayText: 'Call us', phoneNumber: '+4915100000000' },
        ],
      };
      const headers = { 'Idempotency-Key': uniqueName('idem') };
      const res = await send(body, headers);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const interactive = interactiveOf(res.body.message);
      expect(interactive.body.text).toBe('*Payment*');
      expect(interactive.footer).toBeUndefined();
      expect(interactive.header).toMatchObject({ hasMediaAttachment: true, imageMessage: { mimetype: 'image/png', width: 64, height: 48 } });
      expect(interactive.header.imageMessage.url).toMatch(/^http/);
      expect(interactive.contextInfo).toMatchObject({ stanzaId: first.body.key.id, quotedMessage: { conversation: 'how can I pay?' } });
      expect(flowButtons(res.body.message)).toEqual([
        { name: 'cta_copy', params: { display_text: 'Copy code', copy_code: 'ABC-123' } },
        { name: 'cta_url', params: { display_text: 'Open shop', url: 'https://shop.example/pay', merchant_url: 'https://shop.example/pay' } },
        { name: 'cta_call', params: { display_text: 'Call us', phone_number: '+4915100000000' } },
      ]);
      const again = await send(body, headers);
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.key.id).toBe(res.body.key.id);
      const upsert = await upsertOn(rx, b.name, res.body.key.id);
      expect(interactiveOf(upsert.message).header.imageMessage.url).toBe(interactive.header.imageMessage.url);
    });

    it('sends one PIX button as the payment card alone (no text, footer or header)', async () => {
      const res = await send({
        title: 'ignored',
        footer: 'ignored',
        buttons: [{ type: 'pix', currency: 'BRL', name: 'Loja', keyType: 'random', key: '123e4567-e89b-12d3-a456-426614174000' }],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const interactive = interactiveOf(res.body.message);
      expect(interactive.body).toBeUndefined();
      expect(interactive.footer).toBeUndefined();
      const [pix] = flowButtons(res.body.message);
      expect(pix.name).toBe('payment_info');
      expect(pix.params).toMatchObject({
        currency: 'BRL',
        total_amount: { value: 0, offset: 100 },
        reference_id: expect.stringMatching(/^[A-Z0-9]{11}$/),
        type: 'physical-goods',
        order: { status: 'pending', order_type: 'ORDER' },
        payment_settings: [
          { type: 'pix_static_code', pix_static_code: { merchant_name: 'Loja', key: '123e4567-e89b-12d3-a456-426614174000', key_type: 'EVP' } },
        ],
        share_payment_status: false,
      });
      await upsertOn(rx, b.name, res.body.key.id);
    });

    it("answers Evolution's rules and each button's missing fields with 400s", async () => {
      const reply = (id: string) => ({ type: 'reply', displayText: id, id });
      expect400(await send({ title: 'T' }), 'buttons is required');
      expect400(await send({ title: 'T', buttons: [] }), 'At least one button is required');
      expect400(await send({ title: 'T', buttons: [reply('a'), reply('b'), reply('c'), reply('d')] }), 'Maximum of 3 reply buttons allowed');
      expect400(
        await send({ title: 'T', buttons: [reply('a'), { type: 'url', displayText: 'Go', url: 'https://x.example' }] }),
        'Reply buttons cannot be mixed with other button types',
      );
      const pix = { type: 'pix', currency: 'BRL', name: 'Loja', keyType: 'email', key: 'a@b.example' };
      expect400(await send({ buttons: [pix, pix] }), 'Only one PIX button is allowed');
      expect400(await send({ title: 'T', buttons: [{ type: 'share', displayText: 'x' }] }), /buttons\/0\/type|buttons\[0\]\.type must be one of/);
      expect400(await send({ title: 'T', buttons: [{ type: 'reply', displayText: 'Yes' }] }), 'buttons[0].id is required for a reply button');
      expect400(await send({ title: 'T', buttons: [{ type: 'copy', displayText: 'Copy' }] }), 'buttons[0].copyCode is required for a copy button');
      expect400(await send({ title: 'T', buttons: [{ type: 'url', url: 'https://x.example' }] }), 'buttons[0].displayText is required for a url button');
      expect400(await send({ title: 'T', buttons: [{ type: 'call', displayText: 'Call' }] }), 'buttons[0].phoneNumber is required for a call button');
      expect400(await send({ buttons: [{ ...pix, key: undefined }] }), 'buttons[0].key is required for a pix button');
      expect400(await send({ buttons: [reply('a')] }), "title is required (the message's text above the buttons)");
      expect400(await send({ title: 'T', buttons: [reply('a'), reply('a')] }), 'buttons must not repeat a reply id (each reply button needs its own id)');
      expect400(await send({ title: 'T', thumbnailUrl: 'not an image', buttons: [reply('a')] }), /thumbnailUrl/);
    });

    it('the OpenAPI document has sendButtons with its request and answer schemas', async () => {
      const doc = await t.api('GET', 'docs/json', { key: null });
      expect(doc.status).toBe(200);
      const route = doc.body.paths['/messenger/message/sendButtons/{instance}'].post;
      const request = JSON.stringify(route.requestBody);
      for (const field of ['title', 'thumbnailUrl', 'buttons', 'copyCode', 'phoneNumber', 'keyType', 'pix']) expect(request).toContain(field);
      expect(Object.keys(route.responses)).toContain('201');
    });

    it('answers 400 "Method not available" on an EVOLUTION instance', async () => {
      const name = uniqueName('btn-evo');
      const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'EVOLUTION' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect400(
        await t.api('POST', `message/sendButtons/${name}`, {
          body: { number: b.number, title: 'T', buttons: [{ type: 'reply', displayText: 'Yes', id: 'y' }] },
        }),
        'Method not available on Evolution Channel (integration EVOLUTION cannot do buttons)',
      );
    });
  });
});
