// WhatsApp-style message ids chosen by us (so a retried send reuses its id) and the device guess from an id.
import { hexOfByte, randomByte } from '../platform/util/time-ordered-id.js';

const upperHexOfByte = hexOfByte.map((hex) => hex.toUpperCase());

let lastStamp = 0;

/**
 * `3EB0` (WhatsApp Web's prefix) + 18 hex digits: 10 of a time stamp in units of 1/16 ms (ids of one instance
 * sort by creation, keeping the store's index append-only) and 8 random.
 */
export function newMessageId(): string {
  const stamp = Math.max(Math.floor(performance.timeOrigin * 16 + performance.now() * 16), lastStamp + 1);
  lastStamp = stamp;
  // The low 40 bits: one byte above 32 bits, then four (a 32-bit operation cannot hold them all).
  const high = Math.floor(stamp / 2 ** 32) & 0xff;
  const low = stamp >>> 0;
  const hex = upperHexOfByte;
  const time = hex[high] + hex[low >>> 24] + hex[(low >>> 16) & 0xff] + hex[(low >>> 8) & 0xff] + hex[low & 0xff];
  return `3EB0${time}${hex[randomByte()]}${hex[randomByte()]}${hex[randomByte()]}${hex[randomByte()]}`;
}

/** Evolution's `source` field: which kind of device produced a message id. */
export function sourceOfId(id: string): 'ios' | 'android' | 'web' | 'desktop' | 'unknown' {
  if (id.startsWith('3EB0') || id.startsWith('BAE5')) return 'web';
  if (id.length > 21) return 'android';
  if (id.startsWith('3A')) return 'ios';
  if (id.startsWith('3F')) return 'desktop';
  return id.length === 0 ? 'unknown' : 'ios';
}
