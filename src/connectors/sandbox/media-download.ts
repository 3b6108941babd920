// A media message's plain bytes on the sandbox network: its file from the sandbox media store, decrypted with its mediaKey.
import { invalidInput } from '../../core/errors.js';
import { bytesOf, encryptionOverhead, mediaTooLarge } from '../../media/bytes-field.js';
import { decryptMedia } from '../../media/crypto.js';
import type { MediaKind } from '../../media/types.js';

/** The key kind of each media message type (round videos use video keys). */
const kinds: Record<string, MediaKind> = {
  imageMessage: 'image',
  videoMessage: 'video',
  ptvMessage: 'video',
  audioMessage: 'audio',
  documentMessage: 'document',
  stickerMessage: 'sticker',
};

/** A `directPath` the sandbox media store hands out; the file name is all the store accepts. */
const sandboxDirectPath = /^\/sandbox\/media\/([0-9a-f]{32}\.enc)$/;

/** The plain bytes of the media node; a 400 saying why when they cannot be had. */
export async function downloadSandboxMedia(
  read: (fileName: string) => Promise<Buffer | null>,
  node: Record<string, unknown>,
  mediaType: string,
  maxBytes: number,
): Promise<Buffer> {
  const kind = kinds[mediaType];
  if (!kind) throw invalidInput(`${mediaType} is not a media message`);
  const directPath = typeof node.directPath === 'string' ? node.directPath : '';
  const fileName = sandboxDirectPath.exec(directPath)?.[1];
  if (!fileName) throw invalidInput(`the media is not on the sandbox network (directPath "${directPath}" is not a sandbox media path)`);
  const mediaKey = bytesOf(node.mediaKey);
  if (!mediaKey) throw invalidInput('the media message has no mediaKey to decrypt it with');
  const encrypted = await read(fileName);
  if (!encrypted) throw invalidInput('the media file is no longer on the sandbox network');
  if (encrypted.length > maxBytes + encryptionOverhead) throw mediaTooLarge(maxBytes);
  try {
    return await decryptMedia(encrypted, mediaKey, kind);
  } catch (error) {
    throw invalidInput(`the media could not be decrypted with the message's mediaKey (${error instanceof Error ? error.message : String(error)})`);
  }
}
