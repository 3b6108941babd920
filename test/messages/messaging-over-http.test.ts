// End-to-end messaging over HTTP: sandbox instances sending to each other, result shapes, errors, presence,
// queue order and delay, idempotency, sends on unlinked instances and their expiry — on SQLite and PostgreSQL.
import { createDecipheriv, createHash, createHmac, hkdfSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkedSandbox, startApp, startReceiver, storeTargets, type Receiver, type StoreTarget, type TestApp } from '../support/harness.js';
import { uniqueName, uniqueNumber } from '../support/unique.js';
import { sleep, waitFor } from '../support/wait.js';
import { StatusRecorder } from '../../src/messages/status-recorder.js';

const targets = await storeTargets();

// biome-ignore lint/suspicious/noExplicitAny: answers, event data and messages are read field by field
type Json = any;

const nextNumber = () => uniqueNumber('4915');
const nextName = uniqueName;

async function setWebhook(t: TestApp, name: string, url: string) {
  const res = await t.api('POST', `webhook/set/${name}`, { body: { webhook: { enabled: true, url, events: [] } } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

interface Party {
  name: string;
  number: string;
  owner: string;
  apikey: string;
  id: string;
}

async function party(t: TestApp, rx: Receiver | null, prefix: string, extra: Record<string, unknown> = {}): Promise<Party> {
  const name = nextName(prefix);
  const number = nextNumber();
  const linked = await linkedSandbox(t, name, number, extra);
  if (rx) await setWebhook(t, name, rx.url);
  return { name, number, ...linked };
}

/** `messages.update` statuses the receiver got for one key id, in arrival order. */
function statusesOf(rx: Receiver, instance: string, keyId: string): string[] {
  return rx
    .of('messages.update', instance)
    .filter((e) => e.body.data?.keyId === keyId)
    .map((e) => e.body.data.status as string);
}

function upsertsOf(rx: Receiver, instance: string) {
  return rx.of('messages.upsert', instance);
}

/** Index of the first event matching `pred` in arrival order (-1 when none). */
function indexOf(rx: Receiver, pred: (body: Record<string, unknown> & { event: string; instance: string; data: Json }) => boolean) {
  return rx.events.findIndex((e) => pred(e.body));
}

async function sendText(t: TestApp, from: Party, to: string, text: string, extra: Record<string, unknown> = {}, headers?: Record<string, string>) {
  const res = await t.api('POST', `message/sendText/${from.name}`, { body: { number: to, text, ...extra }, headers });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res;
}

async function storedStatus(t: TestApp, instanceId: string, keyId: string) {
  const row = await t.services.store.db
    .selectFrom('messages')
    .select(['status', 'from_me'])
    .where('instance_id', '=', instanceId)
    .where('key_id', '=', keyId)
    .executeTakeFirst();
  return row;
}

const sha256b64 = (data: Buffer) => createHash('sha256').update(data).digest('base64');

/** Opens WhatsApp-encrypted media the way a receiving phone does (HKDF-expanded key, MAC check, AES-CBC). */
function decryptMedia(encrypted: Buffer, mediaKeyB64: string, info: string): Buffer {
  const expanded = Buffer.from(hkdfSync('sha256', Buffer.from(mediaKeyB64, 'base64'), Buffer.alloc(32), info, 112));
  const iv = expanded.subarray(0, 16);
  const cipherKey = expanded.subarray(16, 48);
  const macKey = expanded.subarray(48, 80);
  const ciphertext = encrypted.subarray(0, encrypted.length - 10);
  const mac = encrypted.subarray(encrypted.length - 10);
  const expected = createHmac('sha256', macKey).update(iv).update(ciphertext).digest().subarray(0, 10);
  if (!expected.equals(mac)) throw new Error('media MAC does not match');
  const decipher = createDecipheriv('aes-256-cbc', cipherKey, iv);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
}

async function testImage(width = 64, height = 48): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } })
    .png()
    .toBuffer();
}

/** A loopback HTTP server answering every GET with the given bytes and type. */
async function serveBytes(bytes: Buffer, type: string) {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': type, 'content-length': String(bytes.length) });
    res.end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function expectErrorEnvelope(res: { status: number; body: Json }, status: number, matcher?: RegExp) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ status, error: expect.any(String) });
  expect(Array.isArray(res.body.response?.message)).toBe(true);
  expect(res.body.response.message.length).toBeGreaterThan(0);
  for (const m of res.body.response.message) expect(typeof m).toBe('string');
  if (matcher) expect(res.body.response.message.join(' | ')).toMatch(matcher);
}

/**
 * One app (started with `env`) and one webhook receiver for the suite it is called in: started before the suite's
 * tests and handed to `ready` (which may link parties), closed after them.
 */
function appWithReceiver(target: StoreTarget, ready: (t: TestApp, rx: Receiver) => void | Promise<void>, env: Record<string, string> = {}) {
  let t: TestApp | undefined;
  let rx: Receiver | undefined;
  beforeAll(async () => {
    t = await startApp(target, env);
    rx = await startReceiver();
    await ready(t, rx);
  });
  afterAll(async () => {
    await t?.close();
    await rx?.close();
  });
}

describe.each(targets)('messaging over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox messaging (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    appWithReceiver(target, (app, receiver) => {
      t = app;
      rx = receiver;
    });

    it('delivers A→B: upsert on B, send.message then SERVER_ACK then DELIVERY_ACK on A, READ on markMessageAsRead', async () => {
      const a = await party(t, rx, 'msg-a');
      const b = await party(t, rx, 'msg-b');
      const res = await sendText(t, a, b.number, 'hello B');
      expect(res.body).toMatchObject({ key: { remoteJid: b.owner, fromMe: true, id: expect.any(String) }, status: 'PENDING' });
      expect(res.body.messageTimestamp).toMatch(/^\d+$/);
      const keyId: string = res.body.key.id;

      await rx.waitFor(() => upsertsOf(rx, b.name).some((e) => e.body.data?.key?.id === keyId), 10_000);
      const upsert = upsertsOf(rx, b.name).find((e) => e.body.data.key.id === keyId)!.body;
      expect(upsert.data.key.fromMe).toBe(false);
      expect(upsert.data.key.remoteJid).toBe(a.owner);
      expect(upsert.data.message.conversation).toBe('hello B');
      expect(upsert).toMatchObject({ event: 'messages.upsert', instance: b.name, id: expect.any(String), date_time: expect.any(String) });
      expect(upsert.sender).toBe(b.owner);

      await rx.waitFor(() => statusesOf(rx, a.name, keyId).includes('DELIVERY_ACK'), 10_000);
      const sendIdx = indexOf(rx, (e) => e.event === 'send.message' && e.instance === a.name && e.data?.key?.id === keyId);
      const ackIdx = indexOf(rx, (e) => e.event === 'messages.update' && e.instance === a.name && e.data?.keyId === keyId && e.data.status === 'SERVER_ACK');
      const dlvIdx = indexOf(rx, (e) => e.event === 'messages.update' && e.instance === a.name && e.data?.keyId === keyId && e.data.status === 'DELIVERY_ACK');
      expect(sendIdx).toBeGreaterThanOrEqual(0);
      expect(sendIdx).toBeLessThan(ackIdx);
      expect(ackIdx).toBeLessThan(dlvIdx);
      expect(statusesOf(rx, a.name, keyId)).toEqual(['SERVER_ACK', 'DELIVERY_ACK']);
      const update = rx.events[dlvIdx].body.data;
      expect(update).toMatchObject({ keyId, remoteJid: b.owner, fromMe: true, instanceId: a.id, messageId: expect.any(String) });
      expect((await storedStatus(t, a.id, keyId))?.status).toBe('DELIVERY_ACK');

      const read = await t.api('POST', `chat/markMessageAsRead/${b.name}`, {
        body: { readMessages: [{ remoteJid: a.owner, fromMe: false, id: keyId }] },
      });
      expect(read.status, JSON.stringify(read.body)).toBe(201);
      await rx.waitFor(() => statusesOf(rx, a.name, keyId).includes('READ'), 10_000);
      expect(statusesOf(rx, a.name, keyId)).toEqual(['SERVER_ACK', 'DELIVERY_ACK', 'READ']);
      expect((await storedStatus(t, a.id, keyId))?.status).toBe('READ');
    });

    it('sends READ by itself when the recipient has readMessages on', async () => {
      const a = await party(t, rx, 'rm-a');
      const b = await party(t, rx, 'rm-b');
      const set = await t.api('POST', `settings/set/${b.name}`, { body: { readMessages: true } });
      expect(set.status, JSON.stringify(set.body)).toBe(201);
      expect(set.body.settings.settings.read_messages).toBe(true);
      const keyId = (await sendText(t, a, b.number, 'auto read')).body.key.id;
      await rx.waitFor(() => statusesOf(rx, a.name, keyId).includes('READ'), 10_000);
      expect(statusesOf(rx, a.name, keyId)).toEqual(['SERVER_ACK', 'DELIVERY_ACK', 'READ']);
    });

    it('sends no READ when the recipient hides read receipts (privacy readreceipts none)', async () => {
      const a = await party(t, rx, 'pv-a');
      const b = await party(t, rx, 'pv-b');
      const privacy = { readreceipts: 'none', profile: 'all', status: 'contacts', online: 'all', last: 'contacts', groupadd: 'contacts' };
      // Unknown keys are ignored: the answer and the store hold the six fields only.
      const p = await t.api('POST', `chat/updatePrivacySettings/${b.name}`, { body: { ...privacy, junk: { deep: [1, 2, 3] } } });
      expect(p.status, JSON.stringify(p.body)).toBe(201);
      expect(p.body).toEqual({ update: 'success', data: privacy });
      const stored = await t.services.store.db.selectFrom('instances').select('privacy').where('name', '=', b.name).executeTakeFirstOrThrow();
      expect(JSON.parse(stored.privacy ?? '{}')).toEqual(privacy);
      const set = await t.api('POST', `settings/set/${b.name}`, { body: { readMessages: true } });
      expect(set.status).toBe(201);

      const keyId = (await sendText(t, a, b.number, 'you will not see me read')).body.key.id;
      await rx.waitFor(() => statusesOf(rx, a.name, keyId).includes('DELIVERY_ACK'), 10_000);
      const read = await t.api('POST', `chat/markMessageAsRead/${b.name}`, {
        body: { readMessages: [{ remoteJid: a.owner, fromMe: false, id: keyId }] },
      });
      expect(read.status).toBe(201);
      // A later message's acknowledgements come after anything the first one could still get (one ordered lane per instance).
      const marker = (await sendText(t, a, b.number, 'marker')).body.key.id;
      await rx.waitFor(() => statusesOf(rx, a.name, marker).includes('DELIVERY_ACK'), 10_000);
      await sleep(300);
      expect(statusesOf(rx, a.name, keyId)).toEqual(['SERVER_ACK', 'DELIVERY_ACK']);
      expect((await storedStatus(t, a.id, keyId))?.status).toBe('DELIVERY_ACK');
    });

    it("B replies quoting A's message: contextInfo carries the quoted message, A receives the reply", async () => {
      const a = await party(t, rx, 'qt-a');
      const b = await party(t, rx, 'qt-b');
      const keyId = (await sendText(t, a, b.number, 'question?')).body.key.id;
      await rx.waitFor(() => upsertsOf(rx, b.name).some((e) => e.body.data.key.id === keyId), 10_000);
      const reply = await sendText(t, b, a.number, 'answer!', { quoted: { key: { id: keyId } } });
      const ext = reply.body.message.extendedTextMessage;
      expect(ext.text).toBe('answer!');
      expect(ext.contextInfo).toMatchObject({ stanzaId: keyId, participant: a.owner, quotedMessage: { conversation: 'question?' } });
      await rx.waitFor(() => upsertsOf(rx, a.name).some((e) => e.body.data.key.id === reply.body.key.id), 10_000);
      const onA = upsertsOf(rx, a.name).find((e) => e.body.data.key.id === reply.body.key.id)!.body.data;
      expect(onA.key).toMatchObject({ remoteJid: b.owner, fromMe: false });
      expect(onA.message.extendedTextMessage.contextInfo.stanzaId).toBe(keyId);
    });

    it('quotes a reply without its own quote, and quotes and mentions on polls and lists', async () => {
      const a = await party(t, rx, 'qc-a');
      const b = await party(t, rx, 'qc-b');
      const first = (await sendText(t, a, b.number, 'first')).body.key.id;
      const second = (await sendText(t, a, b.number, 'second', { quoted: { key: { id: first } } })).body.key.id;
      const third = await sendText(t, a, b.number, 'third', { quoted: { key: { id: second } } });
      // The quoted reply comes without the message it quoted: a chain of quotes stays the size of one message.
      expect(third.body.message.extendedTextMessage.contextInfo.quotedMessage).toEqual({ extendedTextMessage: { text: 'second' } });

      const poll = await t.api('POST', `message/sendPoll/${a.name}`, {
        body: { number: b.number, name: 'Lunch?', selectableCount: 1, values: ['yes', 'no'], quoted: { key: { id: first } }, mentioned: [b.number] },
      });
      expect(poll.status, JSON.stringify(poll.body)).toBe(201);
      const pollContext = poll.body.message.pollCreationMessage.contextInfo;
      expect(pollContext).toMatchObject({ stanzaId: first, quotedMessage: { conversation: 'first' }, mentionedJid: [`${b.number}@s.whatsapp.net`] });
      expect(poll.body.contextInfo).toEqual(pollContext);
      const list = await t.api('POST', `message/sendList/${a.name}`, {
        body: { number: b.number, title: 'Menu', values: [{ title: 'Mains', rows: [{ title: 'Soup' }, { title: 'Salad' }] }], quoted: { key: { id: first } } },
      });
      expect(list.status, JSON.stringify(list.body)).toBe(201);
      expect(list.body.message.pollCreationMessage.contextInfo).toMatchObject({ stanzaId: first, quotedMessage: { conversation: 'first' } });
      // The recipient gets the quote with the poll.
      await rx.waitFor(() => upsertsOf(rx, b.name).some((e) => e.body.data.key.id === poll.body.key.id), 10_000);
      const received = upsertsOf(rx, b.name).find((e) => e.body.data.key.id === poll.body.key.id)!.body.data;
      expect(received.message.pollCreationMessage.contextInfo.stanzaId).toBe(first);
    });

    it('reaches a sandbox account linked with a Brazilian mobile number however the sender writes it', async () => {
      const a = await party(t, rx, 'br-a');
      const name = nextName('br-b');
      const brazil = `553199${String(Date.now() % 10_000_000).padStart(7, '0')}`;
      const b = { name, number: brazil, ...(await linkedSandbox(t, name, brazil)) };
      await setWebhook(t, name, rx.url);
      for (const written of [brazil, `+55 31 ${brazil.slice(4, 9)}-${brazil.slice(9)}`, `${brazil}@s.whatsapp.net`]) {
        const keyId = (await sendText(t, a, written, `to ${written}`)).body.key.id;
        await rx.waitFor(() => upsertsOf(rx, b.name).some((e) => e.body.data.key.id === keyId), 10_000);
        await rx.waitFor(() => statusesOf(rx, a.name, keyId).includes('DELIVERY_ACK'), 10_000);
      }
    });

    it('acknowledges a message to a number nobody has with SERVER_ACK only', async () => {
      const a = await party(t, rx, 'un-a');
      const b = await party(t, rx, 'un-b');
      const unknown = nextNumber();
      const res = await sendText(t, a, unknown, 'anyone there?');
      expect(res.body.key.remoteJid).toBe(`${unknown}@s.whatsapp.net`);
      const keyId = res.body.key.id;
      await rx.waitFor(() => statusesOf(rx, a.name, keyId).includes('SERVER_ACK'), 10_000);
      const marker = (await sendText(t, a, b.number, 'marker')).body.key.id;
      await rx.waitFor(() => statusesOf(rx, a.name, marker).includes('DELIVERY_ACK'), 10_000);
      await sleep(300);
      expect(statusesOf(rx, a.name, keyId)).toEqual(['SERVER_ACK']);
      expect((await storedStatus(t, a.id, keyId))?.status).toBe('SERVER_ACK');
      expect(upsertsOf(rx, b.name).some((e) => e.body.data.key.id === keyId)).toBe(false);
    });

    it('receipts racing each other move a message on once per step: the one that lost reads again and steps on', async () => {
      const a = await party(t, rx, 'race-a');
      const sent = await sendText(t, a, nextNumber(), 'raced');
      const keyId = sent.body.key.id as string;
      await rx.waitFor(() => statusesOf(rx, a.name, keyId).includes('SERVER_ACK'), 10_000);
      const instance = t.services.registry.byInstanceName(a.name)!;
      const recorder = new StatusRecorder(t.services.events, t.services.store.dialect, (i) => t.services.registry.apikeyOf(i));
      // Both read SERVER_ACK before either writes; the second write finds the status moved and is tried again.
      await Promise.all([
        recorder.recordMany(t.services.store.db, instance, [keyId], 'DELIVERY_ACK', { ownFirst: true }),
        recorder.recordMany(t.services.store.db, instance, [keyId], 'READ', { ownFirst: true }),
        recorder.recordMany(t.services.store.db, instance, [keyId], 'DELIVERY_ACK', { ownFirst: true }),
      ]);
      const message = await t.services.store.db.selectFrom('messages').select(['id', 'status']).where('key_id', '=', keyId).executeTakeFirstOrThrow();
      expect(message.status).toBe('READ');
      const history = await t.services.store.db.selectFrom('message_status').select('status').where('message_id', '=', message.id).orderBy('id').execute();
      expect(history.map((row) => row.status)).toEqual(['SERVER_ACK', 'DELIVERY_ACK', 'READ']);
      await rx.waitFor(() => statusesOf(rx, a.name, keyId).includes('READ'), 10_000);
      await sleep(200);
      expect(statusesOf(rx, a.name, keyId)).toEqual(['SERVER_ACK', 'DELIVERY_ACK', 'READ']);
    });
  });

  describe.skipIf(!target.available)(`result shapes of sends (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    appWithReceiver(target, async (app, receiver) => {
      t = app;
      rx = receiver;
      a = await party(t, rx, 'shape-a');
      // b views statuses (readStatus on); the status tests post to it.
      b = await party(t, rx, 'shape-b', { readStatus: true });
    });

    /** The common parts of every send answer: 201, PENDING, key, numeric timestamp. */
    function expectRecord(res: { status: number; body: Json }, remoteJid: string) {
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.status).toBe('PENDING');
      expect(res.body.key).toMatchObject({ remoteJid, fromMe: true, id: expect.stringMatching(/\S/) });
      expect(typeof res.body.messageTimestamp).toBe('string');
      expect(res.body.messageTimestamp).toMatch(/^\d+$/);
      expect(Math.abs(Number(res.body.messageTimestamp) - Date.now() / 1000)).toBeLessThan(120);
    }

    /** Checks an image message against the plaintext the caller sent, and that B can fetch and open it. */
    async function expectImage(msg: Json, plain: Buffer, caption: string, width: number, height: number) {
      expect(msg).toMatchObject({
        url: expect.any(String),
        mimetype: 'image/png',
        caption,
        fileSha256: sha256b64(plain),
        fileLength: String(plain.length),
        height,
        width,
        mediaKey: expect.any(String),
        fileEncSha256: expect.any(String),
        directPath: expect.any(String),
        mediaKeyTimestamp: expect.stringMatching(/^\d+$/),
        jpegThumbnail: expect.any(String),
        contextInfo: expect.any(Object),
      });
      expect(typeof msg.fileLength).toBe('string');
      expect(Number.isInteger(msg.height) && Number.isInteger(msg.width)).toBe(true);
      expect(Buffer.from(msg.mediaKey, 'base64')).toHaveLength(32);
      const thumb = Buffer.from(msg.jpegThumbnail, 'base64');
      expect(thumb.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))).toBe(true);
      const meta = await sharp(thumb).metadata();
      expect(meta.format).toBe('jpeg');
      expect(meta.width).toBeGreaterThan(0);
      expect(meta.width).toBeLessThanOrEqual(width);
    }

    /** B got the message; its media URL serves the encrypted bytes, which decrypt to what A sent. */
    async function expectFetchableOnB(keyId: string, kindKey: string, hkdfInfo: string) {
      await rx.waitFor(() => upsertsOf(rx, b.name).some((e) => e.body.data.key.id === keyId), 10_000);
      const got = upsertsOf(rx, b.name).find((e) => e.body.data.key.id === keyId)!.body.data.message[kindKey];
      expect(got).toBeDefined();
      const url = new URL(got.url);
      expect(url.pathname).toMatch(/^\/messenger\/sandbox\/media\//);
      expect(url.pathname).toBe(`/messenger${got.directPath}`);
      // Fetched from the service under test (the path the URL names), without any key.
      const media = await fetch(`${t.url}${url.pathname}`);
      expect(media.status).toBe(200);
      const encrypted = Buffer.from(await media.arrayBuffer());
      expect(sha256b64(encrypted)).toBe(got.fileEncSha256);
      const plain = decryptMedia(encrypted, got.mediaKey, hkdfInfo);
      expect(sha256b64(plain)).toBe(got.fileSha256);
      expect(String(plain.length)).toBe(got.fileLength);
      return { got, url: got.url as string, plain };
    }

    it('sendMedia image from a data URL and from raw base64: full imageMessage, media fetchable and decryptable by B', async () => {
      const png = await testImage(64, 48);
      const res = await t.api('POST', `message/sendMedia/${a.name}`, {
        body: { number: b.number, mediatype: 'image', caption: 'a red box', media: `data:image/png;base64,${png.toString('base64')}` },
      });
      expectRecord(res, b.owner);
      await expectImage(res.body.message.imageMessage, png, 'a red box', 64, 48);
      const onB = await expectFetchableOnB(res.body.key.id, 'imageMessage', 'WhatsApp Image Keys');
      expect(onB.plain.equals(png)).toBe(true);
      expect(onB.got.fileEncSha256).toBe(res.body.message.imageMessage.fileEncSha256);
      // The URL the service announces must point at the service itself.
      expect(new URL(onB.url).origin).toBe(new URL(t.url).origin);

      const raw = await t.api('POST', `message/sendMedia/${a.name}`, {
        body: { number: b.number, mediatype: 'image', media: png.toString('base64') },
      });
      expectRecord(raw, b.owner);
      await expectImage(raw.body.message.imageMessage, png, '', 64, 48);
    });

    it('sendMedia image from an http URL served on loopback', async () => {
      const png = await testImage(40, 30);
      const server = await serveBytes(png, 'image/png');
      try {
        const res = await t.api('POST', `message/sendMedia/${a.name}`, {
          body: { number: b.number, mediatype: 'image', caption: 'from a URL', media: `${server.url}/pictures/box.png` },
        });
        expectRecord(res, b.owner);
        await expectImage(res.body.message.imageMessage, png, 'from a URL', 40, 30);
        await expectFetchableOnB(res.body.key.id, 'imageMessage', 'WhatsApp Image Keys');
      } finally {
        await server.close();
      }
    });

    it('sendMedia document keeps its fileName', async () => {
      const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n', 'latin1');
      const res = await t.api('POST', `message/sendMedia/${a.name}`, {
        body: { number: b.number, mediatype: 'document', fileName: 'report.pdf', caption: 'the report', media: pdf.toString('base64') },
      });
      expectRecord(res, b.owner);
      const doc = res.body.message.documentMessage;
      expect(doc).toMatchObject({
        fileName: 'report.pdf',
        mimetype: 'application/pdf',
        caption: 'the report',
        fileSha256: sha256b64(pdf),
        fileLength: String(pdf.length),
        mediaKey: expect.any(String),
        fileEncSha256: expect.any(String),
        directPath: expect.any(String),
        url: expect.any(String),
      });
      const onB = await expectFetchableOnB(res.body.key.id, 'documentMessage', 'WhatsApp Document Keys');
      expect(onB.plain.equals(pdf)).toBe(true);
    });

    it('sendSticker answers a stickerMessage in image/webp', async () => {
      const png = await testImage(100, 50);
      const res = await t.api('POST', `message/sendSticker/${a.name}`, { body: { number: b.number, sticker: png.toString('base64') } });
      expectRecord(res, b.owner);
      const sticker = res.body.message.stickerMessage;
      expect(sticker).toMatchObject({
        mimetype: 'image/webp',
        fileSha256: expect.any(String),
        fileEncSha256: expect.any(String),
        mediaKey: expect.any(String),
        fileLength: expect.stringMatching(/^\d+$/),
        width: 512,
        height: 512,
      });
      const onB = await expectFetchableOnB(res.body.key.id, 'stickerMessage', 'WhatsApp Image Keys');
      expect((await sharp(onB.plain).metadata()).format).toBe('webp');
    });

    it('sendPoll answers pollCreationMessage with a 32-byte messageSecret', async () => {
      const res = await t.api('POST', `message/sendPoll/${a.name}`, {
        body: { number: b.number, name: 'Lunch?', selectableCount: 2, values: ['Pizza', 'Sushi', 'Salad'] },
      });
      expectRecord(res, b.owner);
      expect(res.body.message.pollCreationMessage).toEqual({
        name: 'Lunch?',
        options: [{ optionName: 'Pizza' }, { optionName: 'Sushi' }, { optionName: 'Salad' }],
        selectableOptionsCount: 2,
      });
      const secret = res.body.message.messageContextInfo?.messageSecret;
      expect(typeof secret).toBe('string');
      expect(Buffer.from(secret, 'base64')).toHaveLength(32);
      await rx.waitFor(() => upsertsOf(rx, b.name).some((e) => e.body.data.key.id === res.body.key.id), 10_000);
      const onB = upsertsOf(rx, b.name).find((e) => e.body.data.key.id === res.body.key.id)!.body.data.message;
      expect(onB.pollCreationMessage.name).toBe('Lunch?');
      expect(onB.messageContextInfo.messageSecret).toBe(secret);
    });

    it('sendList (values or sections) answers a single-choice poll built from the rows', async () => {
      const sections = [
        {
          title: 'Drinks',
          rows: [
            { title: 'Coffee', description: 'hot', rowId: 'c' },
            { title: 'Tea', rowId: 't' },
          ],
        },
        { title: 'Food', rows: [{ title: 'Cake', rowId: 'k' }] },
      ];
      for (const key of ['values', 'sections']) {
        const res = await t.api('POST', `message/sendList/${a.name}`, {
          body: { number: b.number, title: 'Menu', description: 'Pick one', buttonText: 'Open', footerText: 'thanks', [key]: sections },
        });
        expectRecord(res, b.owner);
        expect(res.body.message.pollCreationMessage).toEqual({
          name: 'Menu',
          options: [{ optionName: 'Coffee' }, { optionName: 'Tea' }, { optionName: 'Cake' }],
          selectableOptionsCount: 1,
        });
        expect(Buffer.from(res.body.message.messageContextInfo.messageSecret, 'base64')).toHaveLength(32);
      }
    });

    it('sendStatus text: extendedTextMessage on status@broadcast with participant, delivered to the audience', async () => {
      const res = await t.api('POST', `message/sendStatus/${a.name}`, {
        body: { type: 'text', content: 'Hello status', backgroundColor: '#008000', font: 2, statusJidList: [b.number] },
      });
      expectRecord(res, 'status@broadcast');
      expect(res.body.participant).toBe(a.owner);
      const ext = res.body.message.extendedTextMessage;
      expect(ext.text).toBe('Hello status');
      expect(ext.backgroundArgb).toBe(0xff008000);
      expect(Number.isInteger(ext.backgroundArgb)).toBe(true);
      // font is a string in the record (interface.md); 2 is WhatsApp's FB_SCRIPT, as Evolution answers it.
      expect(ext.font).toBe('FB_SCRIPT');
      await rx.waitFor(() => upsertsOf(rx, b.name).some((e) => e.body.data.key.id === res.body.key.id), 10_000);
      const onB = upsertsOf(rx, b.name).find((e) => e.body.data.key.id === res.body.key.id)!.body.data;
      expect(onB.key).toMatchObject({ remoteJid: 'status@broadcast', fromMe: false, participant: a.owner });
      expect(onB.message.extendedTextMessage.text).toBe('Hello status');
    });

    it('sendStatus refuses an audience that is not people, and text or captions past the limit, naming the field', async () => {
      const post = (body: Record<string, unknown>) =>
        t.api('POST', `message/sendStatus/${a.name}`, { body: { type: 'text', content: 'hi', backgroundColor: '#008000', font: 1, ...body } });
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ statusJidList: [b.number, '120363012345678901@g.us'] }, /statusJidList\[1\] "120363012345678901@g.us" is not a person/],
        [{ statusJidList: ['status@broadcast'] }, /statusJidList\[0\] "status@broadcast" is not a person/],
        [{ statusJidList: [b.number], content: 'x'.repeat(65537) }, /content must be at most 65536 characters for a text status/],
        [
          { statusJidList: [b.number], type: 'image', content: 'https://example.com/a.png', caption: 'x'.repeat(65537) },
          /caption must be at most 65536 characters/,
        ],
      ];
      for (const [body, message] of cases) {
        const res = await post(body);
        expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
        expect(res.body.response.message.join(' ')).toMatch(message);
      }
    });

    it('a status to a viewer with readStatus off is delivered but raises no event there (readStatus on: seen and read)', async () => {
      const quiet = await party(t, rx, 'shape-quiet');
      const res = await t.api('POST', `message/sendStatus/${a.name}`, {
        body: { type: 'text', content: 'quiet status', backgroundColor: '#008000', font: 1, statusJidList: [quiet.number, b.number] },
      });
      expectRecord(res, 'status@broadcast');
      const keyId = res.body.key.id;
      await rx.waitFor(() => statusesOf(rx, a.name, keyId).includes('READ'), 10_000);
      expect(upsertsOf(rx, b.name).some((e) => e.body.data.key.id === keyId)).toBe(true);
      expect(upsertsOf(rx, quiet.name).some((e) => e.body.data.key.id === keyId)).toBe(false);
    });

    it('sendStatus with allContacts reaches the chats A has messaged', async () => {
      const res = await t.api('POST', `message/sendStatus/${a.name}`, {
        body: { type: 'text', content: 'to everyone', backgroundColor: '#112233', font: 0, allContacts: true },
      });
      expectRecord(res, 'status@broadcast');
      expect(res.body.message.extendedTextMessage).toMatchObject({ text: 'to everyone', backgroundArgb: 0xff112233, font: 'SYSTEM' });
      await rx.waitFor(() => upsertsOf(rx, b.name).some((e) => e.body.data.key.id === res.body.key.id), 10_000);
    });

    it('sendStatus image: imageMessage on status@broadcast', async () => {
      const png = await testImage(32, 32);
      const res = await t.api('POST', `message/sendStatus/${a.name}`, {
        body: { type: 'image', content: `data:image/png;base64,${png.toString('base64')}`, caption: 'pic', statusJidList: [b.owner] },
      });
      expectRecord(res, 'status@broadcast');
      expect(res.body.participant).toBe(a.owner);
      await expectImage(res.body.message.imageMessage, png, 'pic', 32, 32);
      await expectFetchableOnB(res.body.key.id, 'imageMessage', 'WhatsApp Image Keys');
    });
  });

  describe.skipIf(!target.available)(`errors of send routes (${target.name})`, () => {
    const maxBytes = 4096;
    let t: TestApp;
    let a: Party;
    let b: Party;
    beforeAll(async () => {
      t = await startApp(target, { MEDIA_MAX_BYTES: String(maxBytes) });
      a = await party(t, null, 'err-a');
      b = await party(t, null, 'err-b');
    });
    afterAll(async () => {
      await t?.close();
    });

    const countMessages = async () =>
      Number(
        (
          await t.services.store.db
            .selectFrom('messages')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('instance_id', '=', a.id)
            .executeTakeFirstOrThrow()
        ).n,
      );

    it('answers 400 naming the field for bad common fields, and stores nothing', async () => {
      const before = await countMessages();
      expectErrorEnvelope(await t.api('POST', `message/sendText/${a.name}`, { body: { text: 'hi' } }), 400, /number is required/);
      expectErrorEnvelope(await t.api('POST', `message/sendMedia/${a.name}`, { body: { mediatype: 'image', media: 'aGVsbG8=' } }), 400, /number is required/);
      expectErrorEnvelope(
        await t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: 'hi', delay: '1000' } }),
        400,
        /delay must be an integer/,
      );
      expectErrorEnvelope(
        await t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: 'hi', delay: 300001 } }),
        400,
        /delay must be at most 300000/,
      );
      expectErrorEnvelope(
        await t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: 'hi', delay: -1 } }),
        400,
        /delay must be at least 0/,
      );
      expectErrorEnvelope(await t.api('POST', `message/sendText/${a.name}`, { body: { number: 'not a number', text: 'hi' } }), 400, /number/);
      const ok = await t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: 'hi', delay: 300000 } });
      expect(ok.status, JSON.stringify(ok.body)).toBe(201);
      expect(await countMessages()).toBe(before + 1);
    });

    it('answers 400 for polls with too few or too many options or a selectableCount above the options', async () => {
      const before = await countMessages();
      const poll = (values: string[], selectableCount = 1) =>
        t.api('POST', `message/sendPoll/${a.name}`, { body: { number: b.number, name: 'Q', selectableCount, values } });
      expectErrorEnvelope(await poll(['only']), 400, /values/);
      const thirteen = Array.from({ length: 13 }, (_, i) => `option ${i + 1}`);
      expectErrorEnvelope(await poll(thirteen), 400, /values.*12/);
      expectErrorEnvelope(await poll(['a', 'b', 'c'], 4), 400, /selectableCount/);
      expectErrorEnvelope(await poll(['a', 'a']), 400, /values/);
      expect((await poll(thirteen.slice(0, 12), 12)).status).toBe(201);
      expect(await countMessages()).toBe(before + 1);
    });

    it('answers 400 for media that is not what mediatype says, 413 for media over MEDIA_MAX_BYTES', async () => {
      const before = await countMessages();
      const pdf = Buffer.from('%PDF-1.4\n%%EOF\n', 'latin1').toString('base64');
      expectErrorEnvelope(
        await t.api('POST', `message/sendMedia/${a.name}`, { body: { number: b.number, mediatype: 'image', media: pdf } }),
        400,
        /media is not an image/,
      );
      expectErrorEnvelope(
        await t.api('POST', `message/sendMedia/${a.name}`, { body: { number: b.number, mediatype: 'image', media: 'this is not media at all' } }),
        400,
        /media/,
      );
      const big = Buffer.alloc(maxBytes + 1, 7);
      expectErrorEnvelope(
        await t.api('POST', `message/sendMedia/${a.name}`, {
          body: { number: b.number, mediatype: 'document', fileName: 'x.bin', media: big.toString('base64') },
        }),
        413,
        /media is larger than/,
      );
      expectErrorEnvelope(
        await t.api('POST', `message/sendSticker/${a.name}`, { body: { number: b.number, sticker: `data:image/png;base64,${big.toString('base64')}` } }),
        413,
        /sticker/,
      );
      const server = await serveBytes(big, 'image/png');
      try {
        expectErrorEnvelope(
          await t.api('POST', `message/sendMedia/${a.name}`, { body: { number: b.number, mediatype: 'image', media: `${server.url}/big.png` } }),
          413,
          /media/,
        );
      } finally {
        await server.close();
      }
      expect(await countMessages()).toBe(before);
    });

    it('answers 400 for a text status without backgroundColor or font', async () => {
      const status = (extra: Record<string, unknown>) =>
        t.api('POST', `message/sendStatus/${a.name}`, { body: { type: 'text', content: 'hi', statusJidList: [b.number], ...extra } });
      expectErrorEnvelope(await status({ font: 1 }), 400, /backgroundColor/);
      expectErrorEnvelope(await status({ backgroundColor: '#008000' }), 400, /font/);
      expectErrorEnvelope(await status({ backgroundColor: 'green', font: 1 }), 400, /backgroundColor/);
      expectErrorEnvelope(await status({ backgroundColor: '#008000', font: 9 }), 400, /font/);
      expectErrorEnvelope(
        await t.api('POST', `message/sendStatus/${a.name}`, { body: { type: 'text', content: 'hi', backgroundColor: '#008000', font: 1 } }),
        400,
        /statusJidList/,
      );
    });

    it('answers 400 for a list without sections or with more rows than a poll can hold', async () => {
      expectErrorEnvelope(
        await t.api('POST', `message/sendList/${a.name}`, { body: { number: b.number, title: 'Menu', buttonText: 'Open' } }),
        400,
        /values is required/,
      );
      const rows = Array.from({ length: 13 }, (_, i) => ({ title: `row ${i}`, rowId: String(i) }));
      expectErrorEnvelope(
        await t.api('POST', `message/sendList/${a.name}`, { body: { number: b.number, title: 'Menu', sections: [{ title: 's', rows }] } }),
        400,
        /12/,
      );
      expectErrorEnvelope(
        await t.api('POST', `message/sendList/${a.name}`, { body: { number: b.number, title: 'Menu', values: [{ title: 's', rows: [] }] } }),
        400,
        /rows/,
      );
      // Messages name the list's own fields, where they were given (not the poll it becomes).
      const list = (body: Record<string, unknown>) => t.api('POST', `message/sendList/${a.name}`, { body: { number: b.number, ...body } });
      const twoSections = [
        { title: 'one', rows: [{ title: 'a' }] },
        { title: 'two', rows: [{ title: 'b' }, { title: ' ' }] },
      ];
      expect((await list({ title: '   ', values: twoSections })).body.response.message).toEqual(['title must not be empty']);
      expect((await list({ title: 'Menu', values: twoSections })).body.response.message).toEqual(['values[1].rows[1].title must not be empty']);
      expect((await list({ title: 'Menu', sections: twoSections })).body.response.message).toEqual(['sections[1].rows[1].title must not be empty']);
      expect((await list({ title: 'x'.repeat(300), sections: twoSections })).body.response.message).toEqual(['title must be at most 255 characters']);
    });

    it('answers 400 for an address that reaches nobody, and for chat sends to the status feed', async () => {
      const text = (number: string) => t.api('POST', `message/sendText/${a.name}`, { body: { number, text: 'hi' } });
      expectErrorEnvelope(await text('@s.whatsapp.net'), 400, /number "@s.whatsapp.net" is not an address: before @s.whatsapp.net must come a phone number/);
      expectErrorEnvelope(await text('abc@s.whatsapp.net'), 400, /is not an address/);
      expectErrorEnvelope(await text('@g.us'), 400, /before @g.us must come a group id/);
      expectErrorEnvelope(await text('x@lid'), 400, /before @lid must come digits/);
      expectErrorEnvelope(await text('status@broadcast'), 400, /status feed: post statuses with \/message\/sendStatus/);
      expectErrorEnvelope(
        await t.api('POST', `chat/sendPresence/${a.name}`, { body: { number: '@s.whatsapp.net', presence: 'composing', delay: 0 } }),
        400,
        /is not an address/,
      );
    });

    it('answers 400 "Method not available" for a poll on an EVOLUTION instance', async () => {
      const name = nextName('evo');
      const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'EVOLUTION' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expectErrorEnvelope(
        await t.api('POST', `message/sendPoll/${name}`, { body: { number: b.number, name: 'Q', selectableCount: 1, values: ['a', 'b'] } }),
        400,
        /Method not available/,
      );
      expectErrorEnvelope(
        await t.api('POST', `message/sendList/${name}`, {
          body: { number: b.number, title: 'L', values: [{ title: 's', rows: [{ title: 'r', rowId: '1' }] }] },
        }),
        400,
        /Method not available/,
      );
      expectErrorEnvelope(await t.api('POST', `chat/sendPresence/${name}`, { body: { number: b.number, presence: 'composing' } }), 400, /Method not available/);
    });

    it('answers 404 for an unknown instance and 401 without a valid key', async () => {
      expectErrorEnvelope(await t.api('POST', 'message/sendText/no-such-instance', { body: { number: b.number, text: 'hi' } }), 404, /no-such-instance/);
      expectErrorEnvelope(
        await t.api('POST', 'message/sendPoll/no-such-instance', { body: { number: b.number, name: 'Q', selectableCount: 1, values: ['a', 'b'] } }),
        404,
      );
      expectErrorEnvelope(await t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: 'hi' }, key: 'wrong-key' }), 401);
      expectErrorEnvelope(await t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: 'hi' }, key: null }), 401);
    });
  });

  describe.skipIf(!target.available)(`presence (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    appWithReceiver(target, async (app, receiver) => {
      t = app;
      rx = receiver;
      a = await party(t, rx, 'pr-a');
      b = await party(t, rx, 'pr-b');
    });

    const presencesOnB = (presence: string) =>
      rx.of('presence.update', b.name).filter((e) => e.body.data?.presences?.[a.owner]?.lastKnownPresence === presence);

    it('answers 201 {presence} at once and B sees composing, then paused after the delay', async () => {
      const started = Date.now();
      const res = await t.api('POST', `chat/sendPresence/${a.name}`, { body: { number: b.number, presence: 'composing', delay: 1000 } });
      const answeredIn = Date.now() - started;
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toEqual({ presence: 'composing' });
      expect(answeredIn).toBeLessThan(600);
      await rx.waitFor(() => presencesOnB('composing').length > 0, 10_000);
      const event = presencesOnB('composing')[0].body;
      expect(event.data).toEqual({ id: a.owner, presences: { [a.owner]: { lastKnownPresence: 'composing' } } });
      await rx.waitFor(() => presencesOnB('paused').length > 0, 10_000);
      const pausedAt = Date.parse(presencesOnB('paused')[0].body.date_time);
      expect(pausedAt - started).toBeGreaterThanOrEqual(900);
    });

    it('accepts presence and delay inside options', async () => {
      const before = presencesOnB('recording').length;
      const res = await t.api('POST', `chat/sendPresence/${a.name}`, { body: { number: b.number, options: { presence: 'recording', delay: 200 } } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toEqual({ presence: 'recording' });
      await rx.waitFor(() => presencesOnB('recording').length > before, 10_000);
      const nested = await t.api('POST', `chat/sendPresence/${a.name}`, { body: { options: { number: b.number, presence: 'available' } } });
      expect(nested.status, JSON.stringify(nested.body)).toBe(201);
      await rx.waitFor(() => presencesOnB('available').length > 0, 10_000);
    });

    it('answers 400 listing the allowed values for an unknown presence', async () => {
      const flat = await t.api('POST', `chat/sendPresence/${a.name}`, { body: { number: b.number, presence: 'typing', delay: 100 } });
      expectErrorEnvelope(flat, 400, /presence must be one of: .*composing/);
      for (const value of ['available', 'unavailable', 'composing', 'recording', 'paused']) {
        expect(flat.body.response.message.join(' ')).toContain(value);
      }
      expectErrorEnvelope(
        await t.api('POST', `chat/sendPresence/${a.name}`, { body: { number: b.number, options: { presence: 'typing' } } }),
        400,
        /presence must be one of/,
      );
      expectErrorEnvelope(await t.api('POST', `chat/sendPresence/${a.name}`, { body: { number: b.number } }), 400, /presence is required/);
      expectErrorEnvelope(await t.api('POST', `chat/sendPresence/${a.name}`, { body: { presence: 'composing' } }), 400, /number is required/);
    });
  });

  describe.skipIf(!target.available)(`send queue (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    appWithReceiver(target, (app, receiver) => {
      t = app;
      rx = receiver;
    });

    it('answers a delayed send at once and delivers ten sends in acceptance order, typing shown first', async () => {
      const a = await party(t, rx, 'q-a');
      const b = await party(t, rx, 'q-b');
      const keys: string[] = [];
      let firstAnswerMs = 0;
      const started = Date.now();
      for (let i = 0; i < 10; i++) {
        const sent = Date.now();
        const res = await sendText(t, a, b.number, `message ${i}`, i === 0 ? { delay: 800 } : {});
        if (i === 0) firstAnswerMs = Date.now() - sent;
        expect(res.body.status).toBe('PENDING');
        keys.push(res.body.key.id);
      }
      expect(firstAnswerMs).toBeLessThan(400);
      // The other nine were not held behind the first one's delay either (9 × 800 ms if they were).
      expect(Date.now() - started).toBeLessThan(4000);
      await rx.waitFor(() => keys.every((k) => upsertsOf(rx, b.name).some((e) => e.body.data.key.id === k)), 15_000);
      const received = upsertsOf(rx, b.name).map((e) => e.body.data.key.id as string);
      expect(received).toEqual(keys);
      expect(upsertsOf(rx, b.name).map((e) => e.body.data.message.conversation)).toEqual(keys.map((_, i) => `message ${i}`));
      // B saw A typing before the delayed message arrived, and the delay was honoured.
      const typing = indexOf(
        rx,
        (e) => e.event === 'presence.update' && e.instance === b.name && e.data?.presences?.[a.owner]?.lastKnownPresence === 'composing',
      );
      const first = indexOf(rx, (e) => e.event === 'messages.upsert' && e.instance === b.name && e.data?.key?.id === keys[0]);
      expect(typing).toBeGreaterThanOrEqual(0);
      expect(typing).toBeLessThan(first);
      const typingAt = Date.parse(rx.events[typing].body.date_time);
      const firstAt = Date.parse(rx.events[first].body.date_time);
      expect(firstAt - typingAt).toBeGreaterThanOrEqual(700);
      // Typing ends (paused) before the message shows, as Evolution does it.
      const paused = indexOf(rx, (e) => e.event === 'presence.update' && e.instance === b.name && e.data?.presences?.[a.owner]?.lastKnownPresence === 'paused');
      expect(paused).toBeGreaterThan(typing);
      expect(paused).toBeLessThan(first);
      for (const k of keys) await waitFor(async () => (await storedStatus(t, a.id, k))?.status === 'DELIVERY_ACK', 10_000);
    });

    it('a delayed send holds back only its own chat', async () => {
      const a = await party(t, rx, 'lane-a');
      const b = await party(t, rx, 'lane-b');
      const c = await party(t, rx, 'lane-c');
      const slow = (await sendText(t, a, b.number, 'slow', { delay: 3000 })).body.key.id;
      const afterSlow = (await sendText(t, a, b.number, 'after slow')).body.key.id;
      const fast = (await sendText(t, a, c.number, 'fast')).body.key.id;
      await rx.waitFor(() => upsertsOf(rx, c.name).some((e) => e.body.data.key.id === fast), 10_000);
      expect(upsertsOf(rx, b.name)).toHaveLength(0);
      await rx.waitFor(() => upsertsOf(rx, b.name).length === 2, 10_000);
      expect(upsertsOf(rx, b.name).map((e) => e.body.data.key.id)).toEqual([slow, afterSlow]);
    });

    it('Idempotency-Key: same body replays the record (header set) and sends once; another body is 422', async () => {
      const a = await party(t, rx, 'idem-a');
      const b = await party(t, rx, 'idem-b');
      const key = `order-${Math.random().toString(36).slice(2)}`;
      const first = await sendText(t, a, b.number, 'charge once', {}, { 'Idempotency-Key': key });
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      const second = await sendText(t, a, b.number, 'charge once', {}, { 'Idempotency-Key': key });
      expect(second.body.key.id).toBe(first.body.key.id);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.body).toMatchObject({ key: first.body.key, status: 'PENDING', messageTimestamp: first.body.messageTimestamp, message: first.body.message });

      const conflict = await t.api('POST', `message/sendText/${a.name}`, {
        body: { number: b.number, text: 'charge twice' },
        headers: { 'Idempotency-Key': key },
      });
      expectErrorEnvelope(conflict, 422, /Idempotency-Key/);

      // After delivery, the replay still answers the same key id and still sends nothing new.
      await rx.waitFor(() => upsertsOf(rx, b.name).some((e) => e.body.data.key.id === first.body.key.id), 10_000);
      const third = await sendText(t, a, b.number, 'charge once', {}, { 'Idempotency-Key': key });
      expect(third.body.key.id).toBe(first.body.key.id);
      expect(third.headers.get('idempotent-replayed')).toBe('true');
      const marker = (await sendText(t, a, b.number, 'marker')).body.key.id;
      await rx.waitFor(() => upsertsOf(rx, b.name).some((e) => e.body.data.key.id === marker), 10_000);
      await sleep(200);
      const texts = upsertsOf(rx, b.name).map((e) => e.body.data.message.conversation);
      expect(texts).toEqual(['charge once', 'marker']);
      const stored = await t.services.store.db.selectFrom('messages').select('key_id').where('instance_id', '=', a.id).execute();
      expect(stored).toHaveLength(2);

      // Keys are scoped to the instance: B may use the same key for its own send.
      const onB = await sendText(t, b, a.number, 'charge once', {}, { 'Idempotency-Key': key });
      expect(onB.headers.get('idempotent-replayed')).toBeNull();
      expect(onB.body.key.id).not.toBe(first.body.key.id);
    });

    it('same Idempotency-Key sent concurrently answers one record', async () => {
      const a = await party(t, rx, 'idc-a');
      const b = await party(t, rx, 'idc-b');
      const key = `burst-${Math.random().toString(36).slice(2)}`;
      const answers = await Promise.all(
        Array.from({ length: 5 }, () =>
          t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: 'once' }, headers: { 'Idempotency-Key': key } }),
        ),
      );
      for (const res of answers) expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(new Set(answers.map((r) => r.body.key.id)).size).toBe(1);
      expect(answers.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(4);
      const marker = (await sendText(t, a, b.number, 'marker')).body.key.id;
      await rx.waitFor(() => upsertsOf(rx, b.name).some((e) => e.body.data.key.id === marker), 10_000);
      await sleep(200);
      expect(upsertsOf(rx, b.name).map((e) => e.body.data.message.conversation)).toEqual(['once', 'marker']);
    });

    it('keeps a send on an unlinked instance PENDING and delivers it once the instance links', async () => {
      const b = await party(t, rx, 'ul-b');
      const name = nextName('ul-a');
      const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await setWebhook(t, name, rx.url);
      const res = await t.api('POST', `message/sendText/${name}`, { body: { number: b.number, text: 'sent before linking' } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.status).toBe('PENDING');
      const keyId = res.body.key.id;
      await sleep(300);
      expect(upsertsOf(rx, b.name).some((e) => e.body.data.key.id === keyId)).toBe(false);
      expect((await storedStatus(t, created.body.instance.instanceId, keyId))?.status).toBe('PENDING');

      const connect = await t.api('GET', `instance/connect/${name}`);
      expect(connect.status, JSON.stringify(connect.body)).toBe(200);
      expect(connect.body.code).toEqual(expect.any(String));
      expect(connect.body.base64).toMatch(/^data:image\/png;base64,/);
      const number = nextNumber();
      const scan = await t.api('POST', 'sandbox/scan', { body: { code: connect.body.code, number } });
      expect(scan.status, JSON.stringify(scan.body)).toBe(200);
      const owner = scan.body.instance.owner;

      await rx.waitFor(() => upsertsOf(rx, b.name).some((e) => e.body.data.key.id === keyId), 15_000);
      const got = upsertsOf(rx, b.name).find((e) => e.body.data.key.id === keyId)!.body.data;
      expect(got.key.remoteJid).toBe(owner);
      expect(got.message.conversation).toBe('sent before linking');
      await rx.waitFor(() => statusesOf(rx, name, keyId).includes('DELIVERY_ACK'), 10_000);
      expect(statusesOf(rx, name, keyId)).toEqual(['SERVER_ACK', 'DELIVERY_ACK']);
    });
    it('names the poster of a status queued before linking once it leaves (send.message and the stored record)', async () => {
      const b = await party(t, rx, 'ulst-b', { readStatus: true });
      const name = nextName('ulst-a');
      const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } });
      expect(created.status).toBe(201);
      await setWebhook(t, name, rx.url);
      const res = await t.api('POST', `message/sendStatus/${name}`, {
        body: { type: 'text', content: 'early status', backgroundColor: '#008000', font: 1, statusJidList: [b.number] },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      // Nobody to name yet: the account is not linked.
      expect(res.body.participant).toBe('');
      const connect = await t.api('GET', `instance/connect/${name}`);
      const scan = await t.api('POST', 'sandbox/scan', { body: { code: connect.body.code, number: nextNumber(), profileName: 'Early Bird' } });
      const owner = scan.body.instance.owner as string;
      await rx.waitFor(() => rx.of('send.message', name).some((e) => e.body.data.key.id === res.body.key.id), 15_000);
      const announced = rx.of('send.message', name).find((e) => e.body.data.key.id === res.body.key.id)!.body.data;
      expect(announced).toMatchObject({ participant: owner, pushName: 'Early Bird' });
      const row = await t.services.store.db
        .selectFrom('messages')
        .select(['participant', 'push_name'])
        .where('key_id', '=', res.body.key.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ participant: owner, push_name: 'Early Bird' });
      await rx.waitFor(() => upsertsOf(rx, b.name).some((e) => e.body.data.key.id === res.body.key.id), 10_000);
    });

    it('delivers a long queue to one chat in batches: in order, each announced once by send.message before its SERVER_ACK', async () => {
      const b = await party(t, rx, 'lq-b');
      const name = nextName('lq-a');
      const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const instanceId = created.body.instance.instanceId as string;
      await setWebhook(t, name, rx.url);
      // Queued while unlinked, so the worker meets them as one long run (several batches, each marked by the write
      // that completed the one before it).
      const keys: string[] = [];
      for (let i = 0; i < 130; i++) {
        const res = await t.api('POST', `message/sendText/${name}`, { body: { number: b.number, text: `long ${i}` } });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        keys.push(res.body.key.id);
      }
      const connect = await t.api('GET', `instance/connect/${name}`);
      const scan = await t.api('POST', 'sandbox/scan', { body: { code: connect.body.code, number: nextNumber() } });
      expect(scan.status, JSON.stringify(scan.body)).toBe(200);

      await rx.waitFor(() => keys.every((k) => statusesOf(rx, name, k).includes('SERVER_ACK')), 20_000);
      await rx.waitFor(() => upsertsOf(rx, b.name).filter((e) => keys.includes(e.body.data.key.id)).length === keys.length, 20_000);
      const received = upsertsOf(rx, b.name)
        .map((e) => e.body.data.key.id as string)
        .filter((k) => keys.includes(k));
      expect(received).toEqual(keys);
      const announced = rx.of('send.message', name).map((e) => e.body.data.key.id as string);
      expect(announced).toEqual(keys);
      for (const k of keys) {
        const sendAt = indexOf(rx, (e) => e.event === 'send.message' && e.instance === name && e.data?.key?.id === k);
        const ackAt = indexOf(rx, (e) => e.event === 'messages.update' && e.instance === name && e.data?.keyId === k && e.data?.status === 'SERVER_ACK');
        expect(sendAt, k).toBeLessThan(ackAt);
      }
      const queued = await t.services.store.db.selectFrom('send_queue').select('seq').where('instance_id', '=', instanceId).execute();
      expect(queued).toEqual([]);
      const statuses = await t.services.store.db
        .selectFrom('messages')
        .select('status')
        .where('instance_id', '=', instanceId)
        .where('from_me', '=', 1)
        .execute();
      expect(statuses).toHaveLength(keys.length);
      for (const row of statuses) expect(['SERVER_ACK', 'DELIVERY_ACK', 'READ']).toContain(row.status);
    });
  });

  describe.skipIf(!target.available)(`shutdown during a typing delay (${target.name})`, () => {
    it('stops promptly while a send waits out a long delay', async () => {
      const t = await startApp(target);
      const rx = await startReceiver();
      try {
        const a = await party(t, rx, 'sd-a');
        const b = await party(t, rx, 'sd-b');
        const res = await sendText(t, a, b.number, 'slow', { delay: 300000 });
        await rx.waitFor(() => rx.of('send.message', a.name).some((e) => e.body.data.key.id === res.body.key.id), 10_000);
        const started = Date.now();
        await t.close();
        expect(Date.now() - started).toBeLessThan(5000);
        expect(upsertsOf(rx, b.name)).toHaveLength(0);
      } finally {
        await rx.close();
      }
    });
  });

  describe.skipIf(!target.available)(`send expiry (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    appWithReceiver(
      target,
      (app, receiver) => {
        t = app;
        rx = receiver;
      },
      { SEND_EXPIRE_AFTER_MS: '1000' },
    );

    it('turns a send that waits past SEND_EXPIRE_AFTER_MS into ERROR with a messages.update', async () => {
      const name = nextName('exp');
      const created = await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'SANDBOX' } });
      expect(created.status).toBe(201);
      await setWebhook(t, name, rx.url);
      const res = await t.api('POST', `message/sendText/${name}`, { body: { number: nextNumber(), text: 'will expire' } });
      expect(res.status).toBe(201);
      const keyId = res.body.key.id;
      await rx.waitFor(() => statusesOf(rx, name, keyId).includes('ERROR'), 15_000);
      const update = rx.of('messages.update', name).find((e) => e.body.data.keyId === keyId)!.body.data;
      expect(update).toMatchObject({ keyId, status: 'ERROR', fromMe: true, instanceId: created.body.instance.instanceId });
      expect((await storedStatus(t, created.body.instance.instanceId, keyId))?.status).toBe('ERROR');
      const queued = await t.services.store.db.selectFrom('send_queue').select('seq').where('instance_id', '=', created.body.instance.instanceId).execute();
      expect(queued).toHaveLength(0);
      // Linking afterwards does not resurrect it.
      const connect = await t.api('GET', `instance/connect/${name}`);
      const scan = await t.api('POST', 'sandbox/scan', { body: { code: connect.body.code, number: nextNumber() } });
      expect(scan.status).toBe(200);
      await sleep(500);
      expect(rx.of('send.message', name)).toHaveLength(0);
    });
  });
});
