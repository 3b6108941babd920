// Media a send still has to upload: the kept bytes, encrypted with the message's own mediaKey, put on WhatsApp's servers.
import { createHash, randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MediaType, WAMediaUploadFunction } from 'baileys';
import { encryptWithKey } from '../../media/crypto.js';

/** The message types that carry uploaded media, and the media kind their keys and upload path use. */
export const mediaKinds: Record<string, MediaType> = {
  imageMessage: 'image',
  videoMessage: 'video',
  audioMessage: 'audio',
  documentMessage: 'document',
  stickerMessage: 'sticker',
  // A round video note is a video with video keys, under its own message key.
  ptvMessage: 'video',
};

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest();

export class MediaUnavailableError extends Error {}

function base64Field(node: Record<string, unknown>, field: string): Buffer | undefined {
  const value = node[field];
  return typeof value === 'string' && value.length > 0 ? Buffer.from(value, 'base64') : undefined;
}

/**
 * The bytes to upload for a media node from what the store kept: kept encrypted bytes are used as they are (their
 * hash is the node's fileEncSha256), kept plaintext (hash = fileSha256) is encrypted with the node's mediaKey.
 */
export async function uploadableBytes(kept: Buffer, node: Record<string, unknown>, kind: MediaType): Promise<{ encrypted: Buffer; fileEncSha256: Buffer }> {
  const keptHash = sha256(kept);
  const fileEncSha256 = base64Field(node, 'fileEncSha256');
  if (fileEncSha256 && keptHash.equals(fileEncSha256)) return { encrypted: kept, fileEncSha256 };
  const mediaKey = base64Field(node, 'mediaKey');
  const fileSha256 = base64Field(node, 'fileSha256');
  if (!mediaKey) throw new MediaUnavailableError('the media has no mediaKey to encrypt it with');
  if (fileSha256 && !keptHash.equals(fileSha256)) throw new MediaUnavailableError('the kept media bytes do not match the message (fileSha256)');
  // The message's own key, so the content's fileEncSha256 stays valid.
  const result = await encryptWithKey(kept, mediaKey, kind);
  if (fileEncSha256 && !result.fileEncSha256.equals(fileEncSha256)) {
    throw new MediaUnavailableError('the media encrypted with its mediaKey does not match the message (fileEncSha256)');
  }
  return { encrypted: result.encrypted, fileEncSha256: result.fileEncSha256 };
}

/** Uploads encrypted media through the socket's upload function (which reads a file), returning where it now lives. */
export async function uploadEncrypted(
  upload: WAMediaUploadFunction,
  encrypted: Buffer,
  kind: MediaType,
  timeoutMs?: number,
): Promise<{ url: string; directPath: string }> {
  const path = join(tmpdir(), `switchboard-wa-${randomBytes(12).toString('hex')}.enc`);
  await writeFile(path, encrypted, { mode: 0o600 });
  try {
    const fileEncSha256B64 = sha256(encrypted).toString('base64');
    const result = await upload(path, { fileEncSha256B64, mediaType: kind, timeoutMs });
    return { url: result.mediaUrl, directPath: result.directPath };
  } finally {
    await rm(path, { force: true });
  }
}
