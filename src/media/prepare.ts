// Media preparation: verify the real type, derive what the message needs, encrypt for upload.

import { invalidInput } from '../core/errors.js';
import { encryptMedia } from './crypto.js';
import { prepareImage } from './image.js';
import { mimetypeFromFileName, sniff, topLevelType, usableDeclaredMimetype } from './sniff.js';
import { prepareSticker } from './sticker.js';
import type { MediaKind, PreparedMedia } from './types.js';

export type { MediaKind, PreparedMedia } from './types.js';

export interface PrepareMediaOptions {
  fileName?: string;
  declaredMimetype?: string;
  /** Request field name used in error messages (default: sticker for stickers, else media). */
  field?: string;
}

const KIND_NOUN: Record<'image' | 'video' | 'audio', string> = {
  image: 'an image',
  video: 'a video',
  audio: 'an audio file',
};

/** Keeps only the base name, without control characters, at most 255 characters. */
function cleanFileName(name: string | undefined): string | undefined {
  const cleaned = name
    ?.replace(/^.*[\\/]/, '')
    .replace(/\p{Cc}/gu, '')
    .trim()
    .slice(0, 255);
  return cleaned || undefined;
}

export async function prepareMedia(bytes: Buffer, kind: MediaKind, opts: PrepareMediaOptions = {}): Promise<PreparedMedia> {
  const field = opts.field ?? (kind === 'sticker' ? 'sticker' : 'media');
  if (bytes.length === 0) throw invalidInput(`${field} is empty`);
  const sniffed = await sniff(bytes);
  const detected = sniffed?.mime;
  const fileName = cleanFileName(opts.fileName);

  let sent = bytes;
  let mimetype: string;
  let extra: Pick<PreparedMedia, 'width' | 'height' | 'jpegThumbnail' | 'isAnimated'> = {};

  if (kind === 'document') {
    mimetype = detected ?? usableDeclaredMimetype(opts.declaredMimetype) ?? mimetypeFromFileName(fileName) ?? 'application/octet-stream';
  } else {
    const expected = kind === 'sticker' ? 'image' : kind;
    if (!detected || topLevelType(detected) !== expected) {
      const what = detected ? `detected ${detected}` : 'its type could not be recognised';
      throw invalidInput(`${field} is not ${KIND_NOUN[expected]} (${what})`);
    }
    mimetype = detected;
    if (kind === 'image') {
      const image = await prepareImage(bytes, detected, field);
      sent = image.bytes;
      mimetype = image.mimetype;
      extra = { width: image.width, height: image.height, jpegThumbnail: image.jpegThumbnail };
    } else if (kind === 'sticker') {
      const sticker = await prepareSticker(bytes, field);
      sent = sticker.bytes;
      mimetype = 'image/webp';
      extra = { width: sticker.width, height: sticker.height, isAnimated: sticker.isAnimated };
    }
  }

  const enc = await encryptMedia(sent, kind);
  return {
    kind,
    bytes: sent,
    mimetype,
    ...(fileName ? { fileName } : {}),
    fileLength: sent.length,
    fileSha256: enc.fileSha256.toString('base64'),
    fileEncSha256: enc.fileEncSha256.toString('base64'),
    mediaKey: enc.mediaKey.toString('base64'),
    mediaKeyTimestamp: String(enc.mediaKeyTimestamp),
    encrypted: enc.encrypted,
    ...extra,
  };
}
