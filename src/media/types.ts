// The media kinds Switchboard sends and the shape of media ready for upload to WhatsApp.

export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

export interface PreparedMedia {
  kind: MediaKind;
  /** The plaintext media actually sent (for stickers: the WebP). */
  bytes: Buffer;
  /** Sniffed from the bytes; documents fall back to the declared type, then the file name. */
  mimetype: string;
  fileName?: string;
  fileLength: number;
  /** base64 SHA-256 of `bytes`. */
  fileSha256: string;
  /** base64 SHA-256 of `encrypted`. */
  fileEncSha256: string;
  /** base64, 32 bytes. */
  mediaKey: string;
  /** Unix time in seconds, as a numeric string. */
  mediaKeyTimestamp: string;
  /** WhatsApp-encrypted bytes (AES-256-CBC ciphertext + 10-byte MAC), ready for upload. */
  encrypted: Buffer;
  width?: number;
  height?: number;
  /** base64 JPEG, 32 px wide (images only). */
  jpegThumbnail?: string;
  /** Stickers only. */
  isAnimated?: boolean;
}
