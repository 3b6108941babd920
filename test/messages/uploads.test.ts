// multipart/form-data uploads over HTTP on both stores: sendMedia, sendWhatsAppAudio, sendPtv and sendSticker take the
// file in part `file`; text parts are coerced to the documented types; the media limit, part names and content types hold.
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { expect400 } from '../support/answers.js';
import { sine, testVideo } from '../support/media-fixtures.js';
import { sandboxParty as party, type Party } from '../support/sandbox-party.js';
import { uniqueName } from '../support/unique.js';

const targets = await storeTargets();

// biome-ignore lint/suspicious/noExplicitAny: answers and event data are read field by field
type Json = any;

interface Upload {
  part?: string;
  bytes: Buffer;
  fileName: string;
  type: string;
}

/** POSTs a multipart form (text fields and at most one file) to a /messenger route, as Evolution's clients do. */
async function postForm(
  t: TestApp,
  path: string,
  fields: Record<string, string | string[]>,
  file?: Upload,
  options: { key?: string; headers?: Record<string, string> } = {},
) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) for (const one of Array.isArray(value) ? value : [value]) form.append(name, one);
  if (file) form.append(file.part ?? 'file', new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.fileName);
  const response = await fetch(`${t.url}/messenger/${path}`, {
    method: 'POST',
    body: form,
    headers: { apikey: options.key ?? t.globalKey, ...(options.headers ?? {}) },
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Json) : null, headers: response.headers };
}

async function upsertOn(rx: Receiver, instance: string, keyId: string): Promise<Json> {
  await rx.waitFor(() => rx.of('messages.upsert', instance).some((e) => e.body.data?.key?.id === keyId), 15_000);
  return rx.of('messages.upsert', instance).find((e) => e.body.data.key.id === keyId)!.body.data;
}

const png = () =>
  sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } })
    .png()
    .toBuffer();

describe.each(targets)('multipart uploads over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox sends (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a = await party(t, rx, 'upload-a');
      b = await party(t, rx, 'upload-b');
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    it('sendMedia takes the file in part file, with its file name and type; text fields coerced (delay, mentionsEveryOne)', async () => {
      const image = await png();
      const res = await postForm(
        t,
        `message/sendMedia/${a.name}`,
        { number: b.number, mediatype: 'image', caption: 'from a form', delay: '0', mentionsEveryOne: 'false' },
        { bytes: image, fileName: 'logo.png', type: 'image/png' },
      );
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({
        messageType: 'imageMessage',
        message: { imageMessage: { mimetype: 'image/png', caption: 'from a form', width: 64, height: 48 } },
      });
      const upsert = await upsertOn(rx, b.name, res.body.key.id);
      expect(upsert.message.imageMessage).toMatchObject({ caption: 'from a form' });

      const doc = await postForm(
        t,
        `message/sendMedia/${a.name}`,
        { number: b.number, mediatype: 'document' },
        { bytes: Buffer.from('%PDF-1.7\n% a form upload\n'), fileName: 'invoice-7.pdf', type: 'application/pdf' },
      );
      expect(doc.status, JSON.stringify(doc.body)).toBe(201);
      expect(doc.body.message.documentMessage).toMatchObject({ fileName: 'invoice-7.pdf', mimetype: 'application/pdf' });
    });

    it('sendWhatsAppAudio takes the file (encoding "false" and delay as text), sendPtv and sendSticker too', async () => {
      const audio = await postForm(
        t,
        `message/sendWhatsAppAudio/${a.name}`,
        { number: b.number, delay: '0', encoding: 'true', mentioned: [b.number] },
        { bytes: await sine('m4a'), fileName: 'note.m4a', type: 'audio/mp4' },
      );
      expect(audio.status, JSON.stringify(audio.body)).toBe(201);
      expect(audio.body.message.audioMessage).toMatchObject({
        ptt: true,
        seconds: 2,
        mimetype: 'audio/ogg; codecs=opus',
        contextInfo: { mentionedJid: [b.owner] },
      });
      const upsert = await upsertOn(rx, b.name, audio.body.key.id);
      expect(upsert.message.audioMessage).toMatchObject({ ptt: true, seconds: 2 });

      // Upstream reads "false" as a truthy string and converts anyway; here it is false.
      const kept = await postForm(
        t,
        `message/sendWhatsAppAudio/${a.name}`,
        { number: b.number, encoding: 'false' },
        { bytes: await sine('mp3'), fileName: 'n.mp3', type: 'audio/mpeg' },
      );
      expect(kept.status, JSON.stringify(kept.body)).toBe(201);
      expect(kept.body.message.audioMessage).toMatchObject({ ptt: true, mimetype: 'audio/mpeg' });

      const ptv = await postForm(
        t,
        `message/sendPtv/${a.name}`,
        { number: b.number },
        { bytes: await testVideo('mp4'), fileName: 'round.mp4', type: 'video/mp4' },
      );
      expect(ptv.status, JSON.stringify(ptv.body)).toBe(201);
      expect(ptv.body).toMatchObject({ messageType: 'ptvMessage', message: { ptvMessage: { mimetype: 'video/mp4', seconds: 2 } } });

      // Upstream converts the sticker field, not the upload; here the upload is the sticker.
      const sticker = await postForm(t, `message/sendSticker/${a.name}`, { number: b.number }, { bytes: await png(), fileName: 's.png', type: 'image/png' });
      expect(sticker.status, JSON.stringify(sticker.body)).toBe(201);
      expect(sticker.body.message.stickerMessage).toMatchObject({ mimetype: 'image/webp', width: 512, height: 512 });
    });

    it('refuses bad text values with a 400 naming the field, a file under another part name naming file, and a non-audio upload naming audio', async () => {
      const file = { bytes: await sine('mp3'), fileName: 'n.mp3', type: 'audio/mpeg' };
      expect400(
        await postForm(t, `message/sendWhatsAppAudio/${a.name}`, { number: b.number, delay: 'soon' }, file),
        'delay must be a whole number (got "soon")',
      );
      expect400(
        await postForm(t, `message/sendWhatsAppAudio/${a.name}`, { number: b.number, encoding: 'maybe' }, file),
        'encoding must be true or false (got "maybe")',
      );
      expect400(
        await postForm(t, `message/sendWhatsAppAudio/${a.name}`, { number: b.number, quoted: '{not json' }, file),
        /^quoted must be an object written as JSON/,
      );
      expect400(
        await postForm(t, `message/sendWhatsAppAudio/${a.name}`, { number: b.number }, { ...file, part: 'audio' }),
        'file: the upload must be sent in the multipart part named "file" (got a file in part "audio")',
      );
      expect400(
        await postForm(t, `message/sendWhatsAppAudio/${a.name}`, { number: b.number }, { bytes: await png(), fileName: 'x.png', type: 'image/png' }),
        'audio is not an audio file (detected image/png)',
      );
      expect400(await postForm(t, `message/sendPtv/${a.name}`, { number: b.number }, file), 'video is not a video (detected audio/mpeg)');
      // No file and no field: the schema's own 400.
      expect400(await postForm(t, `message/sendMedia/${a.name}`, { number: b.number, mediatype: 'image' }), /media/);
    });

    it('an Idempotency-Key on a form replays the first record; a different file with the same key is a 422', async () => {
      const headers = { 'Idempotency-Key': uniqueName('form') };
      const file = { bytes: await sine('wav'), fileName: 'n.wav', type: 'audio/wav' };
      const first = await postForm(t, `message/sendWhatsAppAudio/${a.name}`, { number: b.number }, file, { headers });
      expect(first.status, JSON.stringify(first.body)).toBe(201);
      const again = await postForm(t, `message/sendWhatsAppAudio/${a.name}`, { number: b.number }, file, { headers });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.key.id).toBe(first.body.key.id);
      const other = await postForm(t, `message/sendWhatsAppAudio/${a.name}`, { number: b.number }, { ...file, bytes: await sine('mp3') }, { headers });
      expect(other.status, JSON.stringify(other.body)).toBe(422);
    });

    it('checks the key before reading the form; other routes and content types answer 415; JSON still works', async () => {
      const file = { bytes: await sine('mp3'), fileName: 'n.mp3', type: 'audio/mpeg' };
      const anonymous = await postForm(t, `message/sendWhatsAppAudio/${a.name}`, { number: b.number }, file, { key: 'not-a-key' });
      expect(anonymous.status).toBe(401);
      const text = await postForm(t, `message/sendText/${a.name}`, { number: b.number, text: 'as a form' });
      expect(text.status, JSON.stringify(text.body)).toBe(415);
      expect(text.body.response.message[0]).toMatch(/^Content-Type multipart\/form-data; boundary=.* is not supported; send application\/json$/);
      const chat = await postForm(t, `chat/whatsappNumbers/${a.name}`, { numbers: b.number });
      expect(chat.status).toBe(415);
      const plain = await t.api('POST', `message/sendWhatsAppAudio/${a.name}`, { body: 'audio=x', headers: { 'content-type': 'text/plain' } });
      expect(plain.status).toBe(415);
      const json = await t.api('POST', `message/sendMedia/${a.name}`, {
        body: { number: b.number, mediatype: 'image', media: (await png()).toString('base64') },
      });
      expect(json.status, JSON.stringify(json.body)).toBe(201);
    });
  });
});

describe.each(targets)('the media size limit on uploads on $name', (target) => {
  describe.skipIf(!target.available)(`a small MEDIA_MAX_BYTES (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    beforeAll(async () => {
      t = await startApp(target, { MEDIA_MAX_BYTES: String(64 * 1024) });
      rx = await startReceiver();
      a = await party(t, rx, 'upload-limit');
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    it('answers 413 in the envelope for a file past MEDIA_MAX_BYTES, on every upload route', async () => {
      const big = { bytes: randomBytes(100 * 1024), fileName: 'big.bin', type: 'application/octet-stream' };
      for (const [route, fields] of [
        ['sendMedia', { mediatype: 'document' }],
        ['sendWhatsAppAudio', {}],
        ['sendPtv', {}],
        ['sendSticker', {}],
      ] as const) {
        const res = await postForm(t, `message/${route}/${a.name}`, { number: a.number, ...fields }, big);
        expect(res.status, `${route}: ${JSON.stringify(res.body)}`).toBe(413);
        expect(res.body).toEqual({ status: 413, error: 'Payload Too Large', response: { message: ['file is larger than the 64 KB limit'] } });
      }
      const small = await postForm(t, `message/sendMedia/${a.name}`, { number: a.number, mediatype: 'document' }, { ...big, bytes: randomBytes(10 * 1024) });
      expect(small.status, JSON.stringify(small.body)).toBe(201);
    });
  });
});
