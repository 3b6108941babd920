// Tests for loading media (URL, data URL, base64) and preparing it (sniffing, images, stickers, encryption).

import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodedError } from '../../src/core/errors.js';
import { loadMedia, type LoadMediaOptions } from '../../src/media/load.js';
import { prepareMedia } from '../../src/media/prepare.js';
import { statusOf } from '../../src/platform/http/error-envelope.js';

// ---------- generated media (no binary fixtures) ----------

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 4, background: { r: 200, g: 40, b: 40, alpha: 1 } } })
    .png()
    .toBuffer();

const jpeg = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#2266aa' } })
    .jpeg()
    .toBuffer();

/** A GIF with one solid-colour frame per colour. */
async function gif(colours: Array<[number, number, number]>, width = 40, height = 20): Promise<Buffer> {
  const frames = colours.map(([r, g, b], i) => ({
    input: { create: { width, height, channels: 4 as const, background: { r, g, b, alpha: 1 } } },
    top: i * height,
    left: 0,
  }));
  const strip = await sharp({
    create: { width, height: height * colours.length, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 1 } },
  })
    .composite(frames)
    .raw()
    .toBuffer();
  return sharp(strip, { raw: { width, height: height * colours.length, channels: 4, pageHeight: height } })
    .gif({ delay: colours.map(() => 100), loop: 0 })
    .toBuffer();
}

const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

/** A real (silent) 8 kHz mono 16-bit PCM WAV file. */
function wav(samples = 800): Buffer {
  const data = Buffer.alloc(samples * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

/** The first Ogg page of an Opus stream (OggS page header + OpusHead packet). */
function oggOpusHead(): Buffer {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0);
  head.writeUInt8(1, 8); // version
  head.writeUInt8(1, 9); // channels
  head.writeUInt16LE(312, 10); // pre-skip
  head.writeUInt32LE(48000, 12);
  const page = Buffer.alloc(28);
  page.write('OggS', 0);
  page.writeUInt8(2, 5); // beginning of stream
  page.writeUInt32LE(1, 14); // serial
  page.writeUInt8(1, 26); // one segment
  page.writeUInt8(head.length, 27);
  return Buffer.concat([page, head, Buffer.alloc(64)]);
}

/** An MP4 file-type box (ISO base media, isom brand) followed by an empty mdat. */
function mp4Header(): Buffer {
  const ftyp = Buffer.alloc(24);
  ftyp.writeUInt32BE(24, 0);
  ftyp.write('ftyp', 4);
  ftyp.write('isom', 8);
  ftyp.writeUInt32BE(512, 12);
  ftyp.write('isomiso2', 16);
  const mdat = Buffer.alloc(8);
  mdat.writeUInt32BE(8, 0);
  mdat.write('mdat', 4);
  return Buffer.concat([ftyp, mdat]);
}

const sha256b64 = (b: Buffer) => createHash('sha256').update(b).digest('base64');

async function apiError(p: Promise<unknown>): Promise<CodedError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(CodedError);
    return err as CodedError;
  }
  throw new Error('expected a CodedError, but the call succeeded');
}

// ---------- loopback media server ----------

let server: Server;
let base: string;
let hits = 0;
let served: Buffer; // the PNG served at /img.png
let encryptedBody: Buffer = Buffer.alloc(0); // served at /enc for the baileys decryption round trip

beforeAll(async () => {
  served = await png(64, 48);
  server = createServer((req, res) => {
    hits++;
    const path = req.url ?? '/';
    switch (path) {
      case '/img.png':
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': served.length });
        return res.end(served);
      case '/download?id=7':
        res.writeHead(200, {
          'content-type': 'application/pdf; charset=binary',
          'content-disposition': 'attachment; filename="quarterly report.pdf"',
        });
        return res.end(PDF);
      case '/missing':
        res.writeHead(404);
        return res.end('not here');
      case '/empty':
        res.writeHead(200, { 'content-length': 0 });
        return res.end();
      case '/big-declared':
        // Declares 10 MB but sends a trickle and never finishes: only a pre-read refusal is fast.
        res.writeHead(200, { 'content-length': 10 * 1024 * 1024 });
        res.write(Buffer.alloc(16));
        return;
      case '/big-streamed': {
        // No Content-Length: chunks keep coming until the client hangs up.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const timer = setInterval(() => res.write(Buffer.alloc(4096, 1)), 1);
        res.on('close', () => clearInterval(timer));
        return;
      }
      case '/slow':
        res.writeHead(200, { 'content-type': 'image/png' });
        res.write(served.subarray(0, 10));
        return; // never ends
      case '/to-img':
        res.writeHead(302, { location: '/img.png' });
        return res.end();
      case '/to-metadata':
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/iam/' });
        return res.end();
      case '/to-mapped-metadata':
        res.writeHead(307, { location: 'http://[::ffff:a9fe:a9fe]/latest/meta-data/' });
        return res.end();
      case '/to-file':
        res.writeHead(301, { location: 'file:///etc/passwd' });
        return res.end();
      case '/enc':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return res.end(encryptedBody);
    }
    const loop = /^\/loop\/(\d+)$/.exec(path);
    if (loop) {
      res.writeHead(302, { location: `/loop/${Number(loop[1]) + 1}` });
      return res.end();
    }
    res.writeHead(500);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

// The loopback server is a private address, so URL tests that reach it allow private addresses.
const opts: LoadMediaOptions = { maxBytes: 64 * 1024 * 1024, denyPrivate: false, timeoutMs: 5000, field: 'media' };

// ---------- loadMedia ----------

describe('loadMedia: sources', () => {
  it('downloads an http URL, with a file name hint and the declared type', async () => {
    const loaded = await loadMedia(`${base}/img.png`, opts);
    expect(loaded.bytes.equals(served)).toBe(true);
    expect(loaded.fileNameHint).toBe('img.png');
    expect(loaded.declaredMimetype).toBe('image/png');
  });

  it('takes the file name from Content-Disposition and drops mimetype parameters', async () => {
    const loaded = await loadMedia(`${base}/download?id=7`, opts);
    expect(loaded.bytes.equals(PDF)).toBe(true);
    expect(loaded.fileNameHint).toBe('quarterly report.pdf');
    expect(loaded.declaredMimetype).toBe('application/pdf');
  });

  it('follows a relative redirect', async () => {
    const loaded = await loadMedia(`${base}/to-img`, opts);
    expect(loaded.bytes.equals(served)).toBe(true);
    expect(loaded.fileNameHint).toBe('img.png');
  });

  it('decodes a base64 data URL', async () => {
    const loaded = await loadMedia(`data:image/png;base64,${served.toString('base64')}`, opts);
    expect(loaded.bytes.equals(served)).toBe(true);
    expect(loaded.declaredMimetype).toBe('image/png');
  });

  it('decodes raw base64, including line-wrapped base64', async () => {
    const b64 = served.toString('base64');
    const wrapped = b64.replace(/(.{76})/g, '$1\r\n');
    expect(wrapped).toContain('\n');
    expect((await loadMedia(b64, opts)).bytes.equals(served)).toBe(true);
    const loaded = await loadMedia(`\n  ${wrapped}\n`, opts);
    expect(loaded.bytes.equals(served)).toBe(true);
    expect(loaded.declaredMimetype).toBeUndefined();
  });
});

describe('loadMedia: bad input', () => {
  it.each([
    ['/etc/passwd', /^media is not a valid URL, base64 string or data URL \(local file paths are never read\)$/],
    ['../secrets/key', /local file paths are never read/],
    ['C:\\Windows\\win.ini', /local file paths are never read/],
    ['not base64 at all!', /^media is not a valid URL, base64 string or data URL$/],
    ['QUJD=', /not a valid URL, base64 string or data URL/], // bad length
    ['file:///etc/passwd', /^media URL must use http or https \(got file\)/],
    ['ftp://example.com/a.png', /^media URL must use http or https \(got ftp\)/],
    ['http://', /not a valid URL/],
    ['data:image/png,hello', /data URL must be base64-encoded/],
    ['data:image/png;base64,###', /data URL does not contain valid base64 data/],
    ['   ', /^media is empty$/],
    ['data:image/png;base64,', /^media is empty$/],
  ])('refuses %j with 400', async (input, message) => {
    const err = await apiError(loadMedia(input, opts));
    expect(statusOf(err)).toBe(400);
    expect(err.message).toMatch(message);
  });

  it('names the request field in messages', async () => {
    const err = await apiError(loadMedia('/etc/passwd', { ...opts, field: 'sticker' }));
    expect(err.message).toMatch(/^sticker is not a valid URL/);
  });

  it('refuses a redirect to a non-http scheme', async () => {
    const err = await apiError(loadMedia(`${base}/to-file`, opts));
    expect(statusOf(err)).toBe(400);
    expect(err.message).toBe('media URL must use http or https (got file)');
  });
});

describe('loadMedia: size limit', () => {
  it('refuses base64 larger than the limit with 413', async () => {
    const err = await apiError(loadMedia(served.toString('base64'), { ...opts, maxBytes: 100 }));
    expect(statusOf(err)).toBe(413);
    expect(err.message).toBe('media is larger than the 100 bytes limit');
  });

  it('refuses a too-large Content-Length before reading the body', async () => {
    const started = Date.now();
    const err = await apiError(loadMedia(`${base}/big-declared`, { ...opts, maxBytes: 1024 * 1024 }));
    expect(statusOf(err)).toBe(413);
    expect(err.message).toBe('media is larger than the 1 MB limit');
    expect(Date.now() - started).toBeLessThan(2000); // the body never completes; reading it would time out
  });

  it('stops a body without Content-Length as soon as it passes the limit', async () => {
    const err = await apiError(loadMedia(`${base}/big-streamed`, { ...opts, maxBytes: 64 * 1024 }));
    expect(statusOf(err)).toBe(413);
    expect(err.message).toBe('media is larger than the 64 KB limit');
  });
});

describe('loadMedia: HTTP failures and address policy', () => {
  it('reports the HTTP status of a failed download as 400', async () => {
    const err = await apiError(loadMedia(`${base}/missing`, opts));
    expect(statusOf(err)).toBe(400);
    expect(err.message).toBe('media URL answered HTTP 404');
  });

  it('refuses an empty body', async () => {
    const err = await apiError(loadMedia(`${base}/empty`, opts));
    expect(err.message).toBe('media URL returned an empty body');
  });

  it('times out with 400', async () => {
    const err = await apiError(loadMedia(`${base}/slow`, { ...opts, timeoutMs: 300 }));
    expect(statusOf(err)).toBe(400);
    expect(err.message).toBe('media URL did not finish downloading within 0.3 seconds');
  });

  it('gives up after 5 redirects', async () => {
    const err = await apiError(loadMedia(`${base}/loop/0`, opts));
    expect(statusOf(err)).toBe(400);
    expect(err.message).toBe('media URL redirected more than 5 times');
  });

  it('refuses a redirect to the metadata address', async () => {
    const err = await apiError(loadMedia(`${base}/to-metadata`, opts));
    expect(statusOf(err)).toBe(400);
    expect(err.message).toMatch(/^media URL points to a forbidden address \(169\.254\.169\.254\)/);
  });

  it('refuses a redirect to an IPv4-mapped IPv6 metadata address', async () => {
    const err = await apiError(loadMedia(`${base}/to-mapped-metadata`, opts));
    expect(err.message).toMatch(/^media URL points to a forbidden address \(::ffff:a9fe:a9fe\).*metadata/);
  });

  it('always refuses the metadata address, even when private addresses are allowed', async () => {
    const err = await apiError(loadMedia('http://169.254.169.254/latest/meta-data/', { ...opts, denyPrivate: false }));
    expect(statusOf(err)).toBe(400);
    expect(err.message).toMatch(/forbidden address \(169\.254\.169\.254\)/);
    const v6 = await apiError(loadMedia('http://[fd00:ec2::254]/latest/', { ...opts, denyPrivate: false }));
    expect(v6.message).toMatch(/forbidden address \(fd00:ec2::254\)/);
  });

  it('refuses loopback with denyPrivate without contacting the server', async () => {
    const before = hits;
    const err = await apiError(loadMedia(`${base}/img.png`, { ...opts, denyPrivate: true }));
    expect(statusOf(err)).toBe(400);
    expect(err.message).toMatch(/^media URL points to a forbidden address \(127\.0\.0\.1\): loopback/);
    const port = new URL(base).port;
    const byName = await apiError(loadMedia(`http://localhost:${port}/img.png`, { ...opts, denyPrivate: true }));
    expect(byName.message).toMatch(/forbidden address .*\(localhost resolves to .*\): loopback/);
    expect(hits).toBe(before);
  });
});

// ---------- prepareMedia ----------

describe('prepareMedia: images', () => {
  it('reports dimensions and a real 32 px JPEG thumbnail', async () => {
    const bytes = await png(300, 200);
    const media = await prepareMedia(bytes, 'image');
    expect(media).toMatchObject({ kind: 'image', mimetype: 'image/png', width: 300, height: 200, fileLength: bytes.length });
    expect(media.bytes.equals(bytes)).toBe(true);
    const thumb = Buffer.from(media.jpegThumbnail!, 'base64');
    expect(thumb.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))).toBe(true);
    const meta = await sharp(thumb).metadata();
    expect(meta.format).toBe('jpeg');
    expect(meta.width).toBe(32);
    expect(meta.height).toBe(21);
  });

  it('uses the displayed (EXIF-rotated) dimensions', async () => {
    const rotated = await sharp({ create: { width: 120, height: 60, channels: 3, background: '#ffffff' } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const media = await prepareMedia(rotated, 'image');
    expect([media.width, media.height]).toEqual([60, 120]);
  });

  it('trusts the bytes, not the declared mimetype', async () => {
    const bytes = await jpeg(50, 50);
    const media = await prepareMedia(bytes, 'image', { declaredMimetype: 'image/png', fileName: 'photo.png' });
    expect(media.mimetype).toBe('image/jpeg');
  });

  it('converts image formats WhatsApp does not display to JPEG', async () => {
    const tiff = await sharp({ create: { width: 20, height: 10, channels: 3, background: '#00ff00' } })
      .tiff()
      .toBuffer();
    const media = await prepareMedia(tiff, 'image');
    expect(media.mimetype).toBe('image/jpeg');
    expect((await sharp(media.bytes).metadata()).format).toBe('jpeg');
    expect([media.width, media.height]).toEqual([20, 10]);
  });

  it('refuses bytes that are not an image', async () => {
    const err = await apiError(prepareMedia(PDF, 'image', { declaredMimetype: 'image/jpeg' }));
    expect(statusOf(err)).toBe(400);
    expect(err.message).toBe('media is not an image (detected application/pdf)');
    const text = await apiError(prepareMedia(Buffer.from('hello, world'), 'image'));
    expect(text.message).toBe('media is not an image (its type could not be recognised)');
  });

  it('refuses a truncated image that only looks like one', async () => {
    const bytes = await png(100, 100);
    const err = await apiError(prepareMedia(bytes.subarray(0, 40), 'image'));
    expect(statusOf(err)).toBe(400);
    expect(err.message).toMatch(/^media could not be decoded as an image \(detected image\/png\)/);
  });

  it('refuses an image cut off in its pixels, whose header still reads well (a half-finished download)', async () => {
    // Noise does not compress: the pixel data is most of the file, so a cut at 55 % leaves the header whole.
    const noise = randomBytes(160 * 160 * 3);
    const raw = { raw: { width: 160, height: 160, channels: 3 as const } };
    for (const [encoded, type] of [
      [await sharp(noise, raw).png().toBuffer(), 'image/png'],
      [await sharp(noise, raw).jpeg({ quality: 95 }).toBuffer(), 'image/jpeg'],
    ] as const) {
      const cut = encoded.subarray(0, Math.floor(encoded.length * 0.55));
      expect((await sharp(cut).metadata()).width).toBe(160);
      const err = await apiError(prepareMedia(cut, 'image'));
      expect(statusOf(err)).toBe(400);
      expect(err.message).toBe(`media could not be decoded as an image (detected ${type}); it may be corrupt or truncated`);
    }
  });
});

describe('prepareMedia: video, audio, documents', () => {
  it('accepts video only when the bytes are video', async () => {
    const media = await prepareMedia(mp4Header(), 'video');
    expect(media.mimetype).toBe('video/mp4');
    const err = await apiError(prepareMedia(await png(10, 10), 'video'));
    expect(err.message).toBe('media is not a video (detected image/png)');
  });

  it('accepts audio only when the bytes are audio, recognising Ogg Opus', async () => {
    expect((await prepareMedia(oggOpusHead(), 'audio')).mimetype).toBe('audio/ogg; codecs=opus');
    expect((await prepareMedia(wav(), 'audio')).mimetype).toBe('audio/wav');
    const err = await apiError(prepareMedia(mp4Header(), 'audio', { declaredMimetype: 'audio/mpeg' }));
    expect(err.message).toBe('media is not an audio file (detected video/mp4)');
  });

  it('sends any bytes as a document, with the best available mimetype', async () => {
    const text = Buffer.from('a,b\n1,2\n');
    const sniffed = await prepareMedia(await png(8, 8), 'document', { declaredMimetype: 'application/pdf', fileName: 'x.pdf' });
    expect(sniffed.mimetype).toBe('image/png');
    expect(sniffed.fileName).toBe('x.pdf');
    expect((await prepareMedia(text, 'document', { declaredMimetype: 'text/csv; charset=utf-8' })).mimetype).toBe('text/csv');
    expect((await prepareMedia(text, 'document', { fileName: 'notes.TXT' })).mimetype).toBe('text/plain');
    expect((await prepareMedia(text, 'document', { declaredMimetype: 'application/octet-stream', fileName: 'data.csv' })).mimetype).toBe('text/csv');
    expect((await prepareMedia(text, 'document')).mimetype).toBe('application/octet-stream');
  });

  it('keeps only the base name of a file name', async () => {
    const media = await prepareMedia(PDF, 'document', { fileName: '../../etc/re\u0000port.pdf' });
    expect(media.fileName).toBe('report.pdf');
    expect(media.mimetype).toBe('application/pdf');
  });

  it('refuses empty media', async () => {
    const err = await apiError(prepareMedia(Buffer.alloc(0), 'document'));
    expect(err.message).toBe('media is empty');
  });
});

describe('prepareMedia: stickers', () => {
  it('turns a PNG into a 512x512 WebP on a transparent canvas', async () => {
    const media = await prepareMedia(await png(300, 100), 'sticker');
    expect(media).toMatchObject({ kind: 'sticker', mimetype: 'image/webp', width: 512, height: 512, isAnimated: false });
    expect(media.bytes.subarray(0, 4).toString()).toBe('RIFF');
    expect(media.bytes.subarray(8, 12).toString()).toBe('WEBP');
    const { data, info } = await sharp(media.bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([512, 512]);
    expect(data[3]).toBe(0); // top-left corner is padding: transparent
    const centre = (256 * 512 + 256) * 4;
    expect(data[centre + 3]).toBe(255); // the picture itself is opaque
    expect(media.fileLength).toBe(media.bytes.length);
  });

  it('accepts JPEG input too', async () => {
    const media = await prepareMedia(await jpeg(64, 64), 'sticker');
    expect((await sharp(media.bytes).metadata()).format).toBe('webp');
  });

  it('turns an animated GIF into an animated WebP', async () => {
    const media = await prepareMedia(
      await gif([
        [255, 0, 0],
        [0, 255, 0],
        [0, 0, 255],
      ]),
      'sticker',
    );
    expect(media.isAnimated).toBe(true);
    expect(media.mimetype).toBe('image/webp');
    const meta = await sharp(media.bytes, { animated: true }).metadata();
    expect(meta.format).toBe('webp');
    expect(meta.pages).toBe(3);
    expect(meta.width).toBe(512);
    expect(meta.pageHeight).toBe(512);
  });

  it('keeps a single-frame GIF static', async () => {
    const media = await prepareMedia(await gif([[10, 20, 30]]), 'sticker');
    expect(media.isAnimated).toBe(false);
    expect((await sharp(media.bytes, { animated: true }).metadata()).pages ?? 1).toBe(1);
  });

  it('refuses a sticker that is not an image', async () => {
    const err = await apiError(prepareMedia(PDF, 'sticker'));
    expect(statusOf(err)).toBe(400);
    expect(err.message).toBe('sticker is not an image (detected application/pdf)');
  });
});

describe('prepareMedia: WhatsApp encryption', () => {
  it('round-trips through baileys’ own download decryption', async () => {
    const { getMediaKeys, downloadEncryptedContent, toBuffer } = await import('baileys');
    const bytes = await png(120, 80);
    const media = await prepareMedia(bytes, 'image');

    const mediaKey = Buffer.from(media.mediaKey, 'base64');
    expect(mediaKey.length).toBe(32);
    expect(media.fileSha256).toBe(sha256b64(bytes));
    expect(media.fileEncSha256).toBe(sha256b64(media.encrypted));
    expect(media.encrypted.equals(bytes)).toBe(false);
    expect((media.encrypted.length - 10) % 16).toBe(0);
    const ts = Number(media.mediaKeyTimestamp);
    expect(Number.isInteger(ts)).toBe(true);
    expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(60);

    encryptedBody = media.encrypted;
    const keys = await getMediaKeys(mediaKey, 'image');
    const decrypted = await toBuffer(await downloadEncryptedContent(`${base}/enc`, keys));
    expect(decrypted.equals(bytes)).toBe(true);
  });

  it('appends the HMAC of iv + ciphertext under the media type’s own keys', async () => {
    const { getMediaKeys } = await import('baileys');
    const media = await prepareMedia(await png(20, 20), 'sticker');
    const mediaKey = Buffer.from(media.mediaKey, 'base64');
    const ciphertext = media.encrypted.subarray(0, -10);
    const mac = media.encrypted.subarray(-10);
    const macUnder = async (type: 'sticker' | 'image' | 'video') => {
      const { iv, macKey } = await getMediaKeys(mediaKey, type);
      return createHmac('sha256', macKey!).update(iv).update(ciphertext).digest().subarray(0, 10);
    };
    expect((await macUnder('sticker')).equals(mac)).toBe(true);
    expect((await macUnder('image')).equals(mac)).toBe(true); // WhatsApp derives sticker keys as image keys
    expect((await macUnder('video')).equals(mac)).toBe(false);
  });

  it('uses a fresh media key every time', async () => {
    const bytes = Buffer.from('same document twice');
    const [a, b] = await Promise.all([prepareMedia(bytes, 'document'), prepareMedia(bytes, 'document')]);
    expect(a.mediaKey).not.toBe(b.mediaKey);
    expect(a.fileSha256).toBe(b.fileSha256);
    expect(a.fileEncSha256).not.toBe(b.fileEncSha256);
  });
});

describe('loadMedia + prepareMedia', () => {
  it('prepares a downloaded image end to end', async () => {
    const loaded = await loadMedia(`${base}/img.png`, opts);
    const media = await prepareMedia(loaded.bytes, 'image', { fileName: loaded.fileNameHint, declaredMimetype: loaded.declaredMimetype });
    expect(media).toMatchObject({ mimetype: 'image/png', width: 64, height: 48, fileName: 'img.png' });
  });
});
