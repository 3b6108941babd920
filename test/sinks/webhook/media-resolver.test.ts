// Tests for media decryption and the webhook base64 media resolver (sandbox store, loopback URL, size cap, no media).
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxMediaStore } from '../../../src/connectors/sandbox/media-store.js';
import { decryptMedia, encryptMedia } from '../../../src/media/crypto.js';
import type { MediaKind } from '../../../src/media/types.js';
import { createMediaResolver } from '../../../src/sinks/webhook/media-resolver.js';
import type { EventEnvelope } from '../../../src/core/event-envelope.js';

const kinds: MediaKind[] = ['image', 'video', 'audio', 'document', 'sticker'];
const sha256b64 = (data: Buffer) => createHash('sha256').update(data).digest('base64');

describe('decryptMedia', () => {
  it.each(kinds)('round-trips encryptMedia for %s', async (kind) => {
    for (const size of [0, 1, 15, 16, 1000, 70_001]) {
      const plain = randomBytes(size);
      const enc = await encryptMedia(plain, kind);
      const opened = await decryptMedia(enc.encrypted, enc.mediaKey, kind);
      expect(opened.equals(plain)).toBe(true);
    }
  });

  it("rejects a tampered MAC, a tampered ciphertext and another kind's keys", async () => {
    const plain = randomBytes(500);
    const enc = await encryptMedia(plain, 'image');
    const badMac = Buffer.from(enc.encrypted);
    badMac[badMac.length - 1]! ^= 0x01;
    await expect(decryptMedia(badMac, enc.mediaKey, 'image')).rejects.toThrow(/MAC does not match/);
    const badBody = Buffer.from(enc.encrypted);
    badBody[3]! ^= 0x80;
    await expect(decryptMedia(badBody, enc.mediaKey, 'image')).rejects.toThrow(/MAC does not match/);
    await expect(decryptMedia(enc.encrypted, enc.mediaKey, 'video')).rejects.toThrow(/MAC does not match/);
    await expect(decryptMedia(enc.encrypted, randomBytes(32), 'image')).rejects.toThrow(/MAC does not match/);
    // Stickers use image keys, as in WhatsApp.
    expect((await decryptMedia(enc.encrypted, enc.mediaKey, 'sticker')).equals(plain)).toBe(true);
  });

  it('rejects impossible lengths and wrong key sizes', async () => {
    const enc = await encryptMedia(randomBytes(40), 'document');
    await expect(decryptMedia(enc.encrypted.subarray(0, 20), enc.mediaKey, 'document')).rejects.toThrow(/impossible length/);
    await expect(decryptMedia(enc.encrypted.subarray(1), enc.mediaKey, 'document')).rejects.toThrow(/impossible length/);
    await expect(decryptMedia(enc.encrypted, enc.mediaKey.subarray(0, 16), 'document')).rejects.toThrow(/32 bytes/);
  });
});

function envelope(message: Record<string, unknown>, event = 'MESSAGES_UPSERT'): EventEnvelope {
  return {
    id: randomBytes(8).toString('hex'),
    event,
    instance: 'resolver-test',
    data: { key: { id: 'ABC', remoteJid: '491500000001@s.whatsapp.net', fromMe: false }, message },
    date_time: new Date().toISOString(),
    sender: null,
    server_url: 'http://127.0.0.1:1',
    apikey: null,
  };
}

/** The message node Switchboard stores for sent media (base64 text for the binary fields). */
async function mediaNode(plain: Buffer, kind: MediaKind, where: { url: string; directPath: string }) {
  const enc = await encryptMedia(plain, kind);
  return {
    encrypted: enc.encrypted,
    node: {
      url: where.url,
      directPath: where.directPath,
      mediaKey: enc.mediaKey.toString('base64'),
      fileSha256: sha256b64(plain),
      fileEncSha256: sha256b64(enc.encrypted),
      fileLength: String(plain.length),
    },
  };
}

describe('createMediaResolver', () => {
  let dataDir: string;
  let server: Server;
  let base: string;
  const served = new Map<string, Buffer>();

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sb-resolver-'));
    server = createServer((req, res) => {
      const body = served.get(req.url ?? '');
      if (!body) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) });
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dataDir, { recursive: true, force: true });
  });

  const resolver = (over: Partial<Parameters<typeof createMediaResolver>[0]> = {}) =>
    createMediaResolver({
      readSandboxFile: (name) => new SandboxMediaStore(dataDir, () => '').read(name),
      maxBytes: 1024 * 1024,
      denyPrivate: false,
      timeoutMs: 5000,
      ...over,
    });

  it('reads sandbox media from the data folder (no HTTP: the URL points nowhere)', async () => {
    const plain = randomBytes(3000);
    const enc = await encryptMedia(plain, 'image');
    const uploaded = await new SandboxMediaStore(dataDir, () => 'http://127.0.0.1:9').upload(enc.encrypted);
    expect(uploaded.directPath).toMatch(/^\/sandbox\/media\/[0-9a-f]{32}\.enc$/);
    const message = {
      imageMessage: { url: uploaded.url, directPath: uploaded.directPath, mediaKey: enc.mediaKey.toString('base64'), fileSha256: sha256b64(plain) },
    };
    const base64 = await resolver()(envelope(message));
    expect(Buffer.from(base64!, 'base64').equals(plain)).toBe(true);
    // A caption-wrapped document on SEND_MESSAGE is found too.
    const docEnc = await encryptMedia(plain, 'document');
    const docUpload = await new SandboxMediaStore(dataDir, () => 'http://127.0.0.1:9').upload(docEnc.encrypted);
    const wrapped = { documentWithCaptionMessage: { message: { documentMessage: { ...docUpload, mediaKey: docEnc.mediaKey.toString('base64') } } } };
    const doc = await resolver()(envelope(wrapped, 'SEND_MESSAGE'));
    expect(Buffer.from(doc!, 'base64').equals(plain)).toBe(true);
  });

  it('downloads non-sandbox media from its URL', async () => {
    const plain = randomBytes(5000);
    const { encrypted, node } = await mediaNode(plain, 'audio', { url: `${base}/v/t62/audio.enc`, directPath: '/v/t62/audio.enc?ccb=11' });
    served.set('/v/t62/audio.enc', encrypted);
    const base64 = await resolver()(envelope({ audioMessage: node }));
    expect(Buffer.from(base64!, 'base64').equals(plain)).toBe(true);
    // Round videos (ptv) use video keys.
    const video = await mediaNode(plain, 'video', { url: `${base}/ptv.enc`, directPath: '/ptv.enc' });
    served.set('/ptv.enc', video.encrypted);
    const ptv = await resolver()(envelope({ ptvMessage: video.node }));
    expect(Buffer.from(ptv!, 'base64').equals(plain)).toBe(true);
  });

  it('falls back to the URL when a sandbox file is not in this data folder', async () => {
    const plain = randomBytes(700);
    const name = `${randomBytes(16).toString('hex')}.enc`;
    const { encrypted, node } = await mediaNode(plain, 'image', { url: `${base}/messenger/sandbox/media/${name}`, directPath: `/sandbox/media/${name}` });
    served.set(`/messenger/sandbox/media/${name}`, encrypted);
    const base64 = await resolver()(envelope({ imageMessage: node }));
    expect(Buffer.from(base64!, 'base64').equals(plain)).toBe(true);
  });

  it('refuses media over the size cap, loopback URLs when private addresses are denied, and bytes that do not match', async () => {
    const plain = randomBytes(4096);
    const { encrypted, node } = await mediaNode(plain, 'document', { url: `${base}/big.enc`, directPath: '/big.enc' });
    served.set('/big.enc', encrypted);
    await expect(resolver({ maxBytes: 2048 })(envelope({ documentMessage: node }))).rejects.toThrow(/larger than/);
    await expect(resolver({ denyPrivate: true })(envelope({ documentMessage: node }))).rejects.toThrow(/forbidden address/);
    await expect(resolver()(envelope({ documentMessage: { ...node, fileSha256: sha256b64(Buffer.from('other')) } }))).rejects.toThrow(/fileSha256/);
    await expect(resolver()(envelope({ documentMessage: { ...node, url: `${base}/missing.enc` } }))).rejects.toThrow(/HTTP 404/);
    // And the resolver still works at the right size.
    expect(Buffer.from((await resolver()(envelope({ documentMessage: node })))!, 'base64').equals(plain)).toBe(true);
  });

  it('returns null for messages without usable media', async () => {
    const r = resolver();
    expect(await r(envelope({ conversation: 'hello' }))).toBeNull();
    expect(await r(envelope({ imageMessage: { url: `${base}/x.enc`, directPath: '/x.enc' } }))).toBeNull(); // no mediaKey
    expect(await r(envelope({ imageMessage: { mediaKey: randomBytes(32).toString('base64'), directPath: '/x.enc' } }))).toBeNull(); // no url
    expect(await r({ ...envelope({}), data: null })).toBeNull();
  });
});
