// The webhook `base64` option through the real app: media messages carry their plaintext bytes as
// data.message.base64 on messages.upsert and send.message when on, never when off or for text — on SQLite and PostgreSQL.
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkedSandbox, startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../../support/harness.js';
import { uniqueName, uniqueNumber } from '../../support/unique.js';
import { waitFor } from '../../support/wait.js';

const targets = await storeTargets();

const nextNumber = () => uniqueNumber('4916');
const nextName = uniqueName;
const sha256b64 = (data: Buffer) => createHash('sha256').update(data).digest('base64');

interface Party {
  name: string;
  number: string;
  owner: string;
}

/** A linked sandbox instance whose webhook (all events) goes to `rx`; `how` picks where the base64 option is set. */
async function party(t: TestApp, rx: Receiver, prefix: string, how: 'create' | 'set-base64' | 'set-webhookBase64' | 'off'): Promise<Party> {
  const name = nextName(prefix);
  const number = nextNumber();
  const extra = how === 'create' ? { webhook: { enabled: true, url: rx.url, base64: true, events: [] } } : {};
  const linked = await linkedSandbox(t, name, number, extra);
  if (how !== 'create') {
    const flag = how === 'set-base64' ? { base64: true } : how === 'set-webhookBase64' ? { webhookBase64: true } : { base64: false };
    const res = await t.api('POST', `webhook/set/${name}`, { body: { webhook: { enabled: true, url: rx.url, events: [], ...flag } } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  const found = await t.api('GET', `webhook/find/${name}`);
  expect(found.body.webhookBase64, JSON.stringify(found.body)).toBe(how !== 'off');
  return { name, number, owner: linked.owner };
}

async function send(t: TestApp, from: Party, kind: 'sendMedia' | 'sendText', body: Record<string, unknown>): Promise<string> {
  const res = await t.api('POST', `message/${kind}/${from.name}`, { body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.key.id as string;
}

/** The delivery of `event` for message `keyId` on `instance`, once it arrived. */
function delivery(rx: Receiver, event: string, instance: string, keyId: string) {
  return waitFor(() => rx.of(event, instance).find((e) => e.body.data?.key?.id === keyId), 10_000).then((e) => e.body);
}

describe.each(targets)('webhook base64 option on $name', (target) => {
  describe.skipIf(!target.available)(`media inlined as base64 (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    let c: Party;
    let png: Buffer;

    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a = await party(t, rx, 'b64-a', 'create');
      b = await party(t, rx, 'b64-b', 'set-webhookBase64');
      c = await party(t, rx, 'b64-c', 'off');
      png = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 20, g: 120, b: 220 } } })
        .png()
        .toBuffer();
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    it("an image A→B carries the sent bytes on B's messages.upsert and A's send.message", async () => {
      const res = await t.api('POST', `message/sendMedia/${a.name}`, {
        body: { number: b.number, mediatype: 'image', caption: 'blue', media: png.toString('base64') },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const keyId: string = res.body.key.id;
      // What the send stored and encrypted: the PNG as given (PNGs are sent unchanged).
      expect(res.body.message.imageMessage.fileSha256).toBe(sha256b64(png));

      const upsert = await delivery(rx, 'messages.upsert', b.name, keyId);
      expect(upsert.data.message.imageMessage).toMatchObject({ caption: 'blue', mimetype: 'image/png' });
      expect(typeof upsert.data.message.base64).toBe('string');
      expect(Buffer.from(upsert.data.message.base64, 'base64').equals(png)).toBe(true);

      const sent = await delivery(rx, 'send.message', a.name, keyId);
      expect(typeof sent.data.message.base64).toBe('string');
      expect(Buffer.from(sent.data.message.base64, 'base64').equals(png)).toBe(true);
    });

    it('a document with a caption is inlined too (webhook/set with base64)', async () => {
      const d = await party(t, rx, 'b64-d', 'set-base64');
      const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n', 'latin1');
      const keyId = await send(t, a, 'sendMedia', {
        number: d.number,
        mediatype: 'document',
        fileName: 'r.pdf',
        caption: 'report',
        media: pdf.toString('base64'),
      });
      const upsert = await delivery(rx, 'messages.upsert', d.name, keyId);
      expect(Buffer.from(upsert.data.message.base64, 'base64').equals(pdf)).toBe(true);
    });

    it("no base64 where the option is off: C's upsert and send.message, while A (on) still gets it", async () => {
      const toC = await send(t, a, 'sendMedia', { number: c.number, mediatype: 'image', media: png.toString('base64') });
      const upsertOnC = await delivery(rx, 'messages.upsert', c.name, toC);
      expect(upsertOnC.data.message.imageMessage).toBeDefined();
      expect(upsertOnC.data.message).not.toHaveProperty('base64');
      const sentByA = await delivery(rx, 'send.message', a.name, toC);
      expect(Buffer.from(sentByA.data.message.base64, 'base64').equals(png)).toBe(true);

      const fromC = await send(t, c, 'sendMedia', { number: a.number, mediatype: 'image', media: png.toString('base64') });
      const sentByC = await delivery(rx, 'send.message', c.name, fromC);
      expect(sentByC.data.message.imageMessage).toBeDefined();
      expect(sentByC.data.message).not.toHaveProperty('base64');
      const upsertOnA = await delivery(rx, 'messages.upsert', a.name, fromC);
      expect(Buffer.from(upsertOnA.data.message.base64, 'base64').equals(png)).toBe(true);
    });

    it('a text message gets no base64 even with the option on', async () => {
      const keyId = await send(t, a, 'sendText', { number: b.number, text: 'just words' });
      const upsert = await delivery(rx, 'messages.upsert', b.name, keyId);
      expect(upsert.data.message.conversation).toBe('just words');
      expect(upsert.data.message).not.toHaveProperty('base64');
      const sent = await delivery(rx, 'send.message', a.name, keyId);
      expect(sent.data.message).not.toHaveProperty('base64');
    });
  });
});
