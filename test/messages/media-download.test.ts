// getBase64FromMediaMessage over HTTP on both stores: the bytes a sandbox party sent come back to the receiver (by
// id of the stored message, or from the message given whole), the answer's shape, and the 400s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { uniqueName } from '../support/unique.js';
import { expect400 } from '../support/answers.js';
import { sandboxParty as party, type Party } from '../support/sandbox-party.js';
import { isOggOpus, sine } from '../support/media-fixtures.js';

const targets = await storeTargets();

// biome-ignore lint/suspicious/noExplicitAny: answers and event data are read field by field
type Json = any;

describe.each(targets)('getBase64FromMediaMessage over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    let png: Buffer;
    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a = await party(t, rx, 'md-a');
      b = await party(t, rx, 'md-b');
      png = await sharp({ create: { width: 20, height: 10, channels: 3, background: { r: 10, g: 200, b: 30 } } })
        .png()
        .toBuffer();
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
    });

    async function receivedOnB(body: Record<string, unknown>): Promise<Json> {
      const res = await t.api('POST', `message/sendMedia/${a.name}`, { body: { number: b.number, ...body } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const id = res.body.key.id;
      await rx.waitFor(() => rx.of('messages.upsert', b.name).some((e) => e.body.data.key.id === id), 10_000);
      return rx.of('messages.upsert', b.name).find((e) => e.body.data.key.id === id)!.body.data;
    }

    it('answers 201 with the image the sender sent, found by the id of the stored message', async () => {
      const upsert = await receivedOnB({ mediatype: 'image', caption: 'green', media: png.toString('base64') });
      const res = await t.api('POST', `chat/getBase64FromMediaMessage/${b.name}`, { body: { message: { key: { id: upsert.key.id } } } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toEqual({
        mediaType: 'imageMessage',
        fileName: `${upsert.key.id}.png`,
        caption: 'green',
        size: { fileLength: png.length, height: 10, width: 20 },
        mimetype: 'image/png',
        base64: png.toString('base64'),
        buffer: null,
      });
      // The sender can read its own copy too.
      const own = await t.api('POST', `chat/getBase64FromMediaMessage/${a.name}`, { body: { message: { key: { id: upsert.key.id } } } });
      expect(own.status).toBe(201);
      expect(Buffer.from(own.body.base64, 'base64').equals(png)).toBe(true);
    });

    it('takes the message whole (the data of a messages.upsert event), documents with their own file name', async () => {
      const pdf = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');
      const upsert = await receivedOnB({ mediatype: 'document', fileName: 'report.pdf', media: pdf.toString('base64') });
      const res = await t.api('POST', `chat/getBase64FromMediaMessage/${b.name}`, { body: { message: upsert } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({ mediaType: 'documentMessage', fileName: 'report.pdf', mimetype: 'application/pdf', size: { fileLength: pdf.length } });
      expect(Buffer.from(res.body.base64, 'base64').equals(pdf)).toBe(true);
    });

    it('answers a received voice note as it was sent, and as MP4 with AAC with convertToMp4', async () => {
      const sent = await t.api('POST', `message/sendWhatsAppAudio/${a.name}`, { body: { number: b.number, audio: (await sine('mp3')).toString('base64') } });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      const id = sent.body.key.id;
      await rx.waitFor(() => rx.of('messages.upsert', b.name).some((e) => e.body.data.key.id === id), 10_000);
      const path = `chat/getBase64FromMediaMessage/${b.name}`;
      const asSent = await t.api('POST', path, { body: { message: { key: { id } } } });
      expect(asSent.status, JSON.stringify(asSent.body)).toBe(201);
      expect(asSent.body).toMatchObject({ mediaType: 'audioMessage', mimetype: 'audio/ogg; codecs=opus' });
      expect(isOggOpus(Buffer.from(asSent.body.base64, 'base64'))).toBe(true);
      const mp4 = await t.api('POST', path, { body: { message: { key: { id } }, convertToMp4: true } });
      expect(mp4.status, JSON.stringify(mp4.body)).toBe(201);
      const bytes = Buffer.from(mp4.body.base64, 'base64');
      expect(mp4.body).toMatchObject({ mediaType: 'audioMessage', mimetype: 'audio/mp4', fileName: asSent.body.fileName, size: { fileLength: bytes.length } });
      expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
      expect(bytes.includes(Buffer.from('mp4a'))).toBe(true);
    });

    it('answers 400 for unknown, non-media and undecryptable messages, and for audio whose keys do not open it', async () => {
      const path = `chat/getBase64FromMediaMessage/${b.name}`;
      expect400(await t.api('POST', path, { body: { message: { key: { id: 'NOPE' } } } }), 'Message not found');
      expect400(await t.api('POST', path, { body: {} }), 'message is required');
      expect400(await t.api('POST', path, { body: { message: { key: {} } } }), /name a stored one by message.key.id/);
      expect400(
        await t.api('POST', path, { body: { message: { key: { id: 'X' }, message: { conversation: 'hi' } } } }),
        'The message is not of the media type',
      );
      expect400(
        await t.api('POST', path, { body: { message: { key: { id: 'X' }, message: { messageContextInfo: {} } } } }),
        'The message is messageContextInfo',
      );
      const upsert = await receivedOnB({ mediatype: 'image', media: png.toString('base64') });
      const wrongKey = structuredClone(upsert);
      wrongKey.message.imageMessage.mediaKey = Buffer.alloc(32, 7).toString('base64');
      expect400(await t.api('POST', path, { body: { message: wrongKey } }), /could not be decrypted/);
      // Wrapped (view once) media is opened first.
      const wrapped = { key: upsert.key, message: { viewOnceMessageV2: { message: { imageMessage: upsert.message.imageMessage } } } };
      expect((await t.api('POST', path, { body: { message: wrapped } })).status).toBe(201);
      const audio = { key: { id: 'X' }, message: { audioMessage: { ...upsert.message.imageMessage, mimetype: 'audio/ogg; codecs=opus' } } };
      expect400(await t.api('POST', path, { body: { message: audio, convertToMp4: true } }), /could not be decrypted/);
    });

    it('answers 400 "Method not available" on an EVOLUTION instance', async () => {
      const name = uniqueName('md-evo');
      expect((await t.api('POST', 'instance/create', { body: { instanceName: name, integration: 'EVOLUTION' } })).status).toBe(201);
      expect400(
        await t.api('POST', `chat/getBase64FromMediaMessage/${name}`, { body: { message: { key: { id: 'X' } } } }),
        'Method not available on Evolution Channel (integration EVOLUTION cannot do mediaDownload)',
      );
    });
  });
});
