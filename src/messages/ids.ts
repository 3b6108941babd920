// WhatsApp-style message ids chosen by us (so a retried send reuses its id) and the device guess from an id.
import { pooledRandom } from '../util/time-ordered-id.js';

let lastStamp = 0;

/**
 * `3EB0` (WhatsApp Web's prefix) + 18 hex digits: 10 of a time stamp in units of 1/16 ms (ids of one instance
 * sort by creation, keeping the store's index append-only) and 8 random.
 */
export function newMessageId(): string {
  const stamp = Math.max(Math.floor(performance.timeOrigin * 16 + performance.now() * 16), lastStamp + 1);
  lastStamp = stamp;
  const time = (stamp % 16 ** 10).toString(16).padStart(10, '0');
  return `3EB0${time}${pooledRandom(4).toString('hex')}`.toUpperCase();
}

/** Evolution's `source` field: which kind of device produced a message id. */
export function sourceOfId(id: string): 'ios' | 'android' | 'web' | 'desktop' | 'unknown' {
  if (id.startsWith('3EB0') || id.startsWith('BAE5')) return 'web';
  if (id.length > 21) return 'android';
  if (id.startsWith('3A')) return 'ios';
  if (id.startsWith('3F')) return 'desktop';
  return id.length === 0 ? 'unknown' : 'ios';
}
