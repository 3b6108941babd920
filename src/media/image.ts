// Images: decode check, display dimensions, the 32 px JPEG thumbnail WhatsApp shows while loading.

import sharp from 'sharp';
import { invalidInput } from '../core/errors.js';

export interface PreparedImage {
  bytes: Buffer;
  mimetype: string;
  width: number;
  height: number;
  /** base64 JPEG. */
  jpegThumbnail: string;
}

/** Formats WhatsApp clients display directly; other decodable images are converted to JPEG. */
const SENT_AS_IS = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif']);
const THUMBNAIL_WIDTH = 32;

export async function prepareImage(bytes: Buffer, mimetype: string, field: string): Promise<PreparedImage> {
  let width: number;
  let height: number;
  try {
    // Without `animated`, sharp describes only the first frame of a GIF/WebP: what the thumbnail shows.
    const meta = await sharp(bytes).metadata();
    ({ width, height } = meta.autoOrient);
  } catch {
    throw invalidInput(`${field} could not be decoded as an image (detected ${mimetype}); it may be corrupt or truncated`);
  }
  if (!width || !height) throw invalidInput(`${field} has no readable image dimensions`);

  // The header can be readable while the pixels are not (a truncated download): decoding them fails here.
  const undecodable = () => invalidInput(`${field} could not be decoded as an image (detected ${mimetype}); it may be corrupt or truncated`);
  let sent = bytes;
  let sentType = mimetype;
  if (!SENT_AS_IS.has(mimetype)) {
    sent = await sharp(bytes)
      .autoOrient()
      .jpeg({ quality: 90 })
      .toBuffer()
      .catch(() => {
        throw undecodable();
      });
    sentType = 'image/jpeg';
  }
  const thumbnail = await sharp(bytes)
    .autoOrient()
    .resize({ width: THUMBNAIL_WIDTH, withoutEnlargement: true })
    .flatten({ background: '#ffffff' })
    .jpeg({ quality: 50 })
    .toBuffer()
    .catch(() => {
      throw undecodable();
    });
  return { bytes: sent, mimetype: sentType, width, height, jpegThumbnail: thumbnail.toString('base64') };
}
