// `chat/getBase64FromMediaMessage`: a media message (given whole, or found by its id) downloaded through the connector.
import type { Connector } from '../core/connector.js';
import type { ConnectorKinds } from '../core/connector-kind.js';
import { invalidInput } from '../core/errors.js';
import type { Instance } from '../core/instance.js';
import { findMessageByKey } from './records.js';
import { audioToMp4, mp4AudioMimetype } from '../media/audio-mp4.js';
import type { Ffmpeg } from '../media/ffmpeg.js';
import type { Db } from '../platform/store/db.js';

export interface MediaDownloadDeps {
  db: Db;
  /** MEDIA_MAX_BYTES: the largest media downloaded. */
  maxBytes: number;
  connectorOf(instance: Instance): Connector;
  kinds: Pick<ConnectorKinds, 'assertCan'>;
  /** Converts audio to MP4 (`convertToMp4`). */
  ffmpeg: Ffmpeg;
}

/** The media types looked for, in Evolution's order. */
const mediaTypes = ['imageMessage', 'documentMessage', 'audioMessage', 'videoMessage', 'stickerMessage', 'ptvMessage'] as const;

/** Wrappers whose `message` holds the real content. */
const wrappers = ['ephemeralMessage', 'viewOnceMessage', 'viewOnceMessageV2', 'viewOnceMessageV2Extension', 'documentWithCaptionMessage'];

/** File extensions of the mimetypes WhatsApp media carries (Evolution's MIME lookup gives the same ones). */
const extensions: Record<string, string> = {
  'image/jpeg': 'jpeg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'video/mp4': 'mp4',
  'video/3gpp': '3gp',
  'video/quicktime': 'mov',
  'audio/ogg': 'oga',
  'audio/mpeg': 'mpga',
  'audio/mp4': 'm4a',
  'audio/aac': 'aac',
  'audio/amr': 'amr',
  'audio/wav': 'wav',
  'application/pdf': 'pdf',
  'application/zip': 'zip',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/plain': 'txt',
  'text/csv': 'csv',
};

export interface MediaAnswer {
  mediaType: string;
  fileName: string;
  caption: string | null;
  size: { fileLength: number; height?: number; width?: number };
  mimetype: string;
  base64: string;
  buffer: null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A stored number that may be a 64-bit value in any of its JSON spellings (number, numeric string, `{low, high}`). */
function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  if (isRecord(value) && typeof value.low === 'number' && typeof value.high === 'number') return value.high * 2 ** 32 + (value.low >>> 0);
  return undefined;
}

/** The content inside wrappers (ephemeral, view once, document with caption). */
function unwrapContent(content: Record<string, unknown>): Record<string, unknown> {
  let current = content;
  for (let depth = 0; depth < 5; depth++) {
    const wrapper = wrappers.map((name) => current[name]).find(isRecord);
    const inner = wrapper && isRecord(wrapper.message) ? wrapper.message : undefined;
    if (!inner) return current;
    current = inner;
  }
  return current;
}

/** The file extension of a mimetype (parameters ignored); `bin` when unknown. */
function extensionOf(mimetype: string): string {
  const bare = mimetype.split(';')[0].trim().toLowerCase();
  return extensions[bare] ?? (bare.split('/')[1]?.replace(/[^a-z0-9]/g, '') || 'bin');
}

export class MediaDownloads {
  constructor(private readonly deps: MediaDownloadDeps) {}

  /**
   * The media of `message` (a full message `{key, message}`, or `{key: {id}}` of a stored one) with its plain bytes
   * as base64; audio converted to MP4/AAC with `convertToMp4` (other media are answered as they are, as upstream).
   */
  async base64Of(instance: Instance, message: Record<string, unknown>, convertToMp4: boolean): Promise<MediaAnswer> {
    this.deps.kinds.assertCan(instance, 'mediaDownload');
    const key = isRecord(message.key) ? message.key : {};
    let keyId = typeof key.id === 'string' ? key.id : undefined;
    let content: Record<string, unknown>;
    if (isRecord(message.message)) {
      content = message.message;
    } else {
      if (!keyId) throw invalidInput('message must be a full message ({key, message}) or name a stored one by message.key.id');
      const stored = await findMessageByKey(this.deps.db, instance.id, keyId);
      if (!stored) throw invalidInput('Message not found');
      content = stored.content;
      keyId = stored.keyId;
    }
    const inner = unwrapContent(content);
    const types = Object.keys(inner);
    if (types.length > 0 && types.every((type) => type === 'messageContextInfo')) throw invalidInput('The message is messageContextInfo');
    const mediaType = mediaTypes.find((type) => isRecord(inner[type]));
    if (!mediaType) throw invalidInput('The message is not of the media type');
    const node = inner[mediaType] as Record<string, unknown>;
    const connector = this.deps.connectorOf(instance);
    if (!connector.media) throw invalidInput('this connector cannot download media');
    const downloaded = await connector.media.download(node, mediaType, this.deps.maxBytes);
    const convert = convertToMp4 && mediaType === 'audioMessage';
    const bytes = convert ? await audioToMp4(this.deps.ffmpeg, downloaded, { field: 'convertToMp4', maxBytes: this.deps.maxBytes }) : downloaded;
    const sentType = typeof node.mimetype === 'string' && node.mimetype !== '' ? node.mimetype : 'application/octet-stream';
    // The file name stays the media's own (upstream keeps it when it converts too).
    const mimetype = convert ? mp4AudioMimetype : sentType;
    const fileName = typeof node.fileName === 'string' && node.fileName !== '' ? node.fileName : `${keyId ?? 'media'}.${extensionOf(sentType)}`;
    const height = numberOf(node.height);
    const width = numberOf(node.width);
    return {
      mediaType,
      fileName,
      caption: typeof node.caption === 'string' ? node.caption : null,
      size: {
        fileLength: convert ? bytes.length : (numberOf(node.fileLength) ?? bytes.length),
        ...(height !== undefined ? { height } : {}),
        ...(width !== undefined ? { width } : {}),
      },
      mimetype,
      base64: bytes.toString('base64'),
      buffer: null,
    };
  }
}
