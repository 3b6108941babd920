// The webhook `base64` option's resolver: gets a message's encrypted media (sandbox store or its URL) and decrypts it.
import { createHash, timingSafeEqual } from 'node:crypto';
import { decryptMedia, MEDIA_MAC_LENGTH } from '../../media/crypto.js';
import { fetchMedia } from '../../media/fetch-url.js';
import { formatBytes } from '../../media/size.js';
import type { Config } from '../../platform/config.js';
import { mediaOfEvent, type MediaResolver } from './media-base64.js';

/** The resolver's settings as the configuration gives them (plain data). */
export interface MediaResolverSettings {
  /** MEDIA_MAX_BYTES: the largest media (plaintext) inlined; larger media throws. */
  maxBytes: number;
  /** OUTBOUND_DENY_PRIVATE: refuse media URLs on private or loopback addresses. */
  denyPrivate: boolean;
  /** MEDIA_FETCH_TIMEOUT_MS: budget of one media download. */
  timeoutMs: number;
}

export interface MediaResolverDeps extends MediaResolverSettings {
  /** Reads a file of the sandbox network's media store (null when this node does not have it). */
  readSandboxFile(fileName: string): Promise<Buffer | null>;
}

/** The resolver's settings as the configuration gives them. */
export function mediaResolverSettings(config: Config): MediaResolverSettings {
  return { maxBytes: config.mediaMaxBytes, denyPrivate: config.outboundDenyPrivate, timeoutMs: config.mediaFetchTimeoutMs };
}

/** A `directPath` the sandbox network hands out; the file name is all the store accepts. */
const sandboxDirectPath = /^\/sandbox\/media\/([0-9a-f]{32}\.enc)$/;
/** Encryption adds at most one block of padding plus the MAC. */
const encryptionOverhead = 16 + MEDIA_MAC_LENGTH;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * Returns a `MediaResolver`: null when the event's message has no usable media (no mediaKey or url), the plaintext
 * as base64 otherwise; download, size and decryption problems throw (the event then goes without base64).
 */
export function createMediaResolver(deps: MediaResolverDeps): MediaResolver {
  const maxEncrypted = deps.maxBytes + encryptionOverhead;

  async function encryptedBytes(node: Record<string, unknown>, url: string): Promise<Buffer> {
    const sandboxFile = sandboxDirectPath.exec(text(node.directPath) ?? '')?.[1];
    if (sandboxFile) {
      // Our own sandbox "CDN": read from the data folder rather than over HTTP to ourselves. A file this node does
      // not have (another node's data folder) is fetched from the URL below like any other media.
      const stored = await deps.readSandboxFile(sandboxFile);
      if (stored && stored.length > maxEncrypted) throw new Error(`media is larger than the ${formatBytes(deps.maxBytes)} limit`);
      if (stored) return stored;
    }
    let target: URL;
    try {
      target = downloadUrl(url, text(node.directPath));
    } catch {
      throw new Error('media url is not a valid URL');
    }
    const fetched = await fetchMedia(target, { maxBytes: maxEncrypted, denyPrivate: deps.denyPrivate, timeoutMs: deps.timeoutMs, field: 'media' });
    return fetched.bytes;
  }

  return async (envelope) => {
    const found = mediaOfEvent(envelope.data);
    const mediaKey = text(found?.node.mediaKey);
    const url = text(found?.node.url);
    if (!found || !mediaKey || !url) return null;
    const encrypted = await encryptedBytes(found.node, url);
    const plain = await decryptMedia(encrypted, Buffer.from(mediaKey, 'base64'), found.kind);
    if (plain.length > deps.maxBytes) throw new Error(`media is larger than the ${formatBytes(deps.maxBytes)} limit`);
    const fileSha256 = text(found.node.fileSha256);
    if (fileSha256 && !sameHash(plain, fileSha256)) throw new Error('decrypted media does not match the message (fileSha256)');
    return plain.toString('base64');
  };
}

/**
 * The URL to download from. WhatsApp sometimes gives a placeholder `url` on web.whatsapp.net with the real location
 * only in `directPath`; the media is then on the mmg.whatsapp.net CDN.
 */
function downloadUrl(url: string, directPath: string | undefined): URL {
  const parsed = new URL(url);
  if (parsed.hostname === 'web.whatsapp.net' && directPath?.startsWith('/')) return new URL(`https://mmg.whatsapp.net${directPath}`);
  return parsed;
}

function sameHash(bytes: Buffer, expectedBase64: string): boolean {
  const actual = createHash('sha256').update(bytes).digest();
  const expected = Buffer.from(expectedBase64, 'base64');
  return expected.length === actual.length && timingSafeEqual(actual, expected);
}
