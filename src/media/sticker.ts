// Stickers: any readable image becomes a 512x512 WebP on a transparent canvas, animated when the input is.

import sharp from 'sharp';
import { invalidInput } from '../core/errors.js';

export interface PreparedSticker {
  bytes: Buffer;
  width: number;
  height: number;
  isAnimated: boolean;
}

const STICKER_SIZE = 512;
/** WhatsApp's size limits for sticker files; quality is lowered step by step to fit. */
const STATIC_LIMIT = 100 * 1024;
const ANIMATED_LIMIT = 500 * 1024;
const QUALITY_STEPS = [80, 60, 40, 25];
const ANIMATABLE = new Set(['gif', 'webp']);

export async function prepareSticker(bytes: Buffer, field: string): Promise<PreparedSticker> {
  let isAnimated: boolean;
  try {
    const meta = await sharp(bytes, { animated: true }).metadata();
    isAnimated = ANIMATABLE.has(meta.format) && (meta.pages ?? 1) > 1;
  } catch {
    throw invalidInput(`${field} could not be read as an image; send a PNG, JPEG, WebP or GIF`);
  }

  const limit = isAnimated ? ANIMATED_LIMIT : STATIC_LIMIT;
  let webp: Buffer | undefined;
  for (const quality of QUALITY_STEPS) {
    try {
      webp = await sharp(bytes, { animated: isAnimated })
        .autoOrient()
        .resize(STICKER_SIZE, STICKER_SIZE, { fit: 'contain', background: { r: 0, g: 0, b: 0, alpha: 0 } })
        .webp({ quality, ...(isAnimated ? { loop: 0 } : {}) })
        .toBuffer();
    } catch {
      throw invalidInput(`${field} could not be converted to a WebP sticker; it may be corrupt or truncated`);
    }
    if (webp.length <= limit) break;
  }
  if (webp === undefined) throw new Error('QUALITY_STEPS is empty');
  // Still over the limit at the lowest quality: send it anyway; WhatsApp may still accept it.
  return { bytes: webp, width: STICKER_SIZE, height: STICKER_SIZE, isAnimated };
}
