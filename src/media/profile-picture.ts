// A profile picture as WhatsApp keeps them: any decodable image, turned upright, cropped square and saved as a 640 px JPEG.
import sharp from 'sharp';
import { invalidInput } from '../core/errors.js';
import { sniff, topLevelType } from './sniff.js';

/** WhatsApp shows profile pictures square, at most 640 pixels wide. */
const side = 640;

/** The JPEG to set as a profile picture; a 400 naming `field` when the bytes are not an image. */
export async function profilePicture(bytes: Buffer, field: string): Promise<Buffer> {
  const found = await sniff(bytes);
  if (!found || topLevelType(found.mime) !== 'image') {
    throw invalidInput(`${field} must be an image (JPEG, PNG, WebP…)${found ? `; got ${found.mime}` : ''}`);
  }
  try {
    return await sharp(bytes).autoOrient().resize(side, side, { fit: 'cover' }).jpeg({ quality: 85 }).toBuffer();
  } catch {
    throw invalidInput(`${field} could not be decoded as an image (detected ${found.mime}); it may be corrupt or truncated`);
  }
}
