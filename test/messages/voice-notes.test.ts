// sendWhatsAppAudio and sendPtv over HTTP on both stores: real audio and video made with ffmpeg, converted when the send
// is accepted, delivered to the other sandbox instance (events at a real HTTP receiver); bad files are 400s naming the field.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptMedia } from '../../src/media/crypto.js';
import { startApp, startReceiver, storeTargets, type Receiver, type TestApp } from '../support/harness.js';
import { expect400 } from '../support/answers.js';
import { isOggOpus, sine, testVideo } from '../support/media-fixtures.js';
import { sandboxParty as party, type Party } from '../support/sandbox-party.js';
import { uniqueName } from '../support/unique.js';

const targets = await storeTargets();

// biome-ignore lint/suspicious/noExplicitAny: answers and event data are read field by field
type Json = any;

async function upsertOn(rx: Receiver, instance: string, keyId: string): Promise<Json> {
  await rx.waitFor(() => rx.of('messages.upsert', instance).some((e) => e.body.data?.key?.id === keyId), 15_000);
  return rx.of('messages.upsert', instance).find((e) => e.body.data.key.id === keyId)!.body.data;
}

/** The plaintext of a media node as the recipient gets it: downloaded from the sandbox CDN and decrypted with its key. */
async function download(node: Json, kind: 'audio' | 'video'): Promise<Buffer> {
  const res = await fetch(node.url);
  expect(res.status).toBe(200);
  return decryptMedia(Buffer.from(await res.arrayBuffer()), Buffer.from(node.mediaKey, 'base64'), kind);
}

const waveformOf = (node: Json) => [...Buffer.from(node.waveform, 'base64')];

/** Serves fixed bytes at /<name> on loopback (media URLs). */
async function fileServer(files: Record<string, Buffer>): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const body = files[(req.url ?? '/').slice(1)];
    if (!body) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe.each(targets)('voice notes and round videos over HTTP on $name', (target) => {
  describe.skipIf(!target.available)(`sandbox sends (${target.name})`, () => {
    let t: TestApp;
    let rx: Receiver;
    let a: Party;
    let b: Party;
    let files: { url: string; server: Server };
    beforeAll(async () => {
      t = await startApp(target);
      rx = await startReceiver();
      a = await party(t, rx, 'voice-a');
      b = await party(t, rx, 'voice-b');
      files = await fileServer({ 'note.mp3': await sine('mp3'), 'clip.mp4': await testVideo('mp4') });
    });
    afterAll(async () => {
      await t?.close();
      await rx?.close();
      files?.server.close();
    });

    it('converts mp3, wav, m4a, ogg and webm to an OGG/Opus voice note with its length and waveform; B receives it', async () => {
      for (const ext of ['mp3', 'wav', 'm4a', 'ogg', 'webm']) {
        const res = await t.api('POST', `message/sendWhatsAppAudio/${a.name}`, {
          body: { number: b.number, audio: (await sine(ext)).toString('base64'), mimetype: 'audio/whatever', fileName: 'ignored.bin' },
        });
        expect(res.status, `${ext}: ${JSON.stringify(res.body)}`).toBe(201);
        expect(res.body).toMatchObject({
          key: { remoteJid: b.owner, fromMe: true, id: expect.any(String) },
          messageType: 'audioMessage',
          status: 'PENDING',
          message: {
            audioMessage: {
              ptt: true,
              seconds: 2,
              mimetype: 'audio/ogg; codecs=opus',
              url: expect.stringContaining('/messenger/sandbox/media/'),
              mediaKey: expect.any(String),
              fileSha256: expect.any(String),
              fileEncSha256: expect.any(String),
              fileLength: expect.any(String),
            },
          },
        });
        const node = res.body.message.audioMessage;
        const waveform = waveformOf(node);
        expect(waveform, ext).toHaveLength(64);
        expect(Math.max(...waveform), ext).toBe(100);
        expect(waveform.every((bar) => bar >= 0 && bar <= 100)).toBe(true);
        // A steady sine: every bar is close to the loudest.
        expect(Math.min(...waveform.slice(2, -2)), ext).toBeGreaterThan(80);

        const upsert = await upsertOn(rx, b.name, res.body.key.id);
        expect(upsert).toMatchObject({
          key: { remoteJid: a.owner, fromMe: false },
          messageType: 'audioMessage',
          message: { audioMessage: { ptt: true, seconds: 2, mimetype: 'audio/ogg; codecs=opus', waveform: node.waveform } },
        });
        const received = await download(upsert.message.audioMessage, 'audio');
        expect(isOggOpus(received), ext).toBe(true);
        expect(createHash('sha256').update(received).digest('base64')).toBe(node.fileSha256);
      }
    });

    it('takes a URL and a data URL; encoding false sends the bytes as given, still measured', async () => {
      const byUrl = await t.api('POST', `message/sendWhatsAppAudio/${a.name}`, { body: { number: b.number, audio: `${files.url}/note.mp3` } });
      expect(byUrl.status, JSON.stringify(byUrl.body)).toBe(201);
      expect(byUrl.body.message.audioMessage).toMatchObject({ ptt: true, seconds: 2, mimetype: 'audio/ogg; codecs=opus' });

      const ogg = await sine('ogg');
      const dataUrl = `data:audio/ogg;base64,${ogg.toString('base64')}`;
      const kept = await t.api('POST', `message/sendWhatsAppAudio/${a.name}`, { body: { number: b.number, audio: dataUrl, encoding: false } });
      expect(kept.status, JSON.stringify(kept.body)).toBe(201);
      expect(kept.body.message.audioMessage).toMatchObject({ ptt: true, seconds: 2, mimetype: 'audio/ogg; codecs=opus' });
      expect(kept.body.message.audioMessage.fileSha256).toBe(createHash('sha256').update(ogg).digest('base64'));
      expect(waveformOf(kept.body.message.audioMessage)).toHaveLength(64);

      const mp3 = await sine('mp3');
      const keptMp3 = await t.api('POST', `message/sendWhatsAppAudio/${a.name}`, {
        body: { number: b.number, audio: mp3.toString('base64'), encoding: false },
      });
      expect(keptMp3.status, JSON.stringify(keptMp3.body)).toBe(201);
      expect(keptMp3.body.message.audioMessage).toMatchObject({ ptt: true, seconds: 2, mimetype: 'audio/mpeg' });
      expect(keptMp3.body.message.audioMessage.fileSha256).toBe(createHash('sha256').update(mp3).digest('base64'));
    });

    it('refuses what is not audio, or cannot be read as audio, with a 400 naming audio; nothing is sent', async () => {
      // What A stored as its own sends (B keeps storing what earlier tests delivered to it).
      const stored = async () => (await t.services.store.db.selectFrom('messages').select('id').where('from_me', '=', 1).execute()).length;
      const before = await stored();
      const pdf = Buffer.from('%PDF-1.7\n% not a sound\n').toString('base64');
      expect400(
        await t.api('POST', `message/sendWhatsAppAudio/${a.name}`, { body: { number: b.number, audio: pdf } }),
        'audio is not an audio file (detected application/pdf)',
      );
      const mp3 = await sine('mp3');
      const broken = Buffer.concat([mp3.subarray(0, 400), Buffer.alloc(4000, 0x55)]).toString('base64');
      expect400(await t.api('POST', `message/sendWhatsAppAudio/${a.name}`, { body: { number: b.number, audio: broken } }), /^audio could not be read as audio/);
      expect400(await t.api('POST', `message/sendWhatsAppAudio/${a.name}`, { body: { number: b.number, audio: 'not base64!' } }), /^audio is not a valid URL/);
      expect400(await t.api('POST', `message/sendWhatsAppAudio/${a.name}`, { body: { number: b.number } }), /audio/);
      const webm = (await sine('webm')).toString('base64');
      expect400(
        await t.api('POST', `message/sendWhatsAppAudio/${a.name}`, { body: { number: b.number, audio: webm, encoding: false } }),
        /^audio is not an audio file \(detected video\/webm\); send it with encoding true/,
      );
      expect400(await t.api('POST', `message/sendWhatsAppAudio/${a.name}`, { body: { number: b.number, audio: webm, encoding: 'no' } }), /encoding/);
      expect(await stored()).toBe(before);
    });

    it('applies quoted, mentioned and delay (B sees "recording", then the note); Idempotency-Key replays the first record', async () => {
      const first = await t.api('POST', `message/sendText/${a.name}`, { body: { number: b.number, text: 'say it' } });
      expect(first.status).toBe(201);
      const body = {
        number: b.number,
        audio: (await sine('mp3')).toString('base64'),
        delay: 300,
        quoted: { key: { id: first.body.key.id } },
        mentioned: [b.number],
      };
      const headers = { 'Idempotency-Key': uniqueName('voice') };
      const res = await t.api('POST', `message/sendWhatsAppAudio/${a.name}`, { body, headers });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.message.audioMessage.contextInfo).toMatchObject({
        stanzaId: first.body.key.id,
        quotedMessage: { conversation: 'say it' },
        mentionedJid: [b.owner],
      });
      const again = await t.api('POST', `message/sendWhatsAppAudio/${a.name}`, { body, headers });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.key.id).toBe(res.body.key.id);

      await rx.waitFor(() => rx.of('presence.update', b.name).some((e) => e.body.data?.presences?.[a.owner]?.lastKnownPresence === 'recording'), 10_000);
      const upsert = await upsertOn(rx, b.name, res.body.key.id);
      expect(upsert.message.audioMessage.contextInfo).toMatchObject({ stanzaId: first.body.key.id });
      // Sent once: the replay queued nothing.
      expect(rx.of('messages.upsert', b.name).filter((e) => e.body.data.key.id === res.body.key.id)).toHaveLength(1);
    });

    it('sendPtv sends an MP4 as a round video note with its length, from base64 or a URL; other videos become MP4', async () => {
      const mp4 = await testVideo('mp4');
      const res = await t.api('POST', `message/sendPtv/${a.name}`, { body: { number: b.number, video: mp4.toString('base64') } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({
        messageType: 'ptvMessage',
        message: { ptvMessage: { mimetype: 'video/mp4', seconds: 2, url: expect.any(String), mediaKey: expect.any(String) } },
      });
      expect(res.body.message.ptvMessage.caption).toBeUndefined();
      expect(res.body.message.ptvMessage.fileSha256).toBe(createHash('sha256').update(mp4).digest('base64'));
      const upsert = await upsertOn(rx, b.name, res.body.key.id);
      expect(upsert).toMatchObject({ messageType: 'ptvMessage', message: { ptvMessage: { mimetype: 'video/mp4', seconds: 2 } } });

      // Upstream reads a URL as a local file path (500); here it is downloaded like any media.
      const byUrl = await t.api('POST', `message/sendPtv/${a.name}`, { body: { number: b.number, video: `${files.url}/clip.mp4` } });
      expect(byUrl.status, JSON.stringify(byUrl.body)).toBe(201);
      expect(byUrl.body.message.ptvMessage).toMatchObject({ mimetype: 'video/mp4', seconds: 2 });

      const webm = await t.api('POST', `message/sendPtv/${a.name}`, { body: { number: b.number, video: (await testVideo('webm')).toString('base64') } });
      expect(webm.status, JSON.stringify(webm.body)).toBe(201);
      expect(webm.body.message.ptvMessage).toMatchObject({ mimetype: 'video/mp4', seconds: 2 });
      const converted = await download(webm.body.message.ptvMessage, 'video');
      expect(converted.subarray(4, 8).toString('latin1')).toBe('ftyp');
    });

    it('sendPtv refuses what is not a video with a 400 naming video', async () => {
      expect400(
        await t.api('POST', `message/sendPtv/${a.name}`, { body: { number: b.number, video: (await sine('mp3')).toString('base64') } }),
        'video is not a video (detected audio/mpeg)',
      );
      expect400(
        await t.api('POST', `message/sendPtv/${a.name}`, { body: { number: b.number, video: `${files.url}/missing.mp4` } }),
        /^video URL answered HTTP 404/,
      );
    });

    it('EVOLUTION answers "Method not available" for both; WHATSAPP-BUSINESS for sendPtv', async () => {
      const evolution = uniqueName('voice-evo');
      const created = await t.api('POST', 'instance/create', { body: { instanceName: evolution, integration: 'EVOLUTION', token: 'evo-token-voice-0001' } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const audio = (await sine('mp3')).toString('base64');
      expect400(
        await t.api('POST', `message/sendWhatsAppAudio/${evolution}`, { body: { number: b.number, audio } }),
        /^Method not available on Evolution Channel/,
      );
      expect400(
        await t.api('POST', `message/sendPtv/${evolution}`, { body: { number: b.number, video: audio } }),
        /^Method not available on Evolution Channel/,
      );

      const business = uniqueName('voice-meta');
      const meta = await t.api('POST', 'instance/create', {
        body: { instanceName: business, integration: 'WHATSAPP-BUSINESS', token: 'meta-token-voice', number: '106540352242922' },
      });
      expect(meta.status, JSON.stringify(meta.body)).toBe(201);
      expect400(
        await t.api('POST', `message/sendPtv/${business}`, { body: { number: b.number, video: audio } }),
        /^Method not available on WhatsApp Business API/,
      );
    });
  });
});
