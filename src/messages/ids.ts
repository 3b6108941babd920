// WhatsApp-style message ids chosen by us (so a retried send reuses its id) and the device guess from an id.
import { randomBytes } from 'node:crypto';

export function newMessageId(): string {
  return `3EB0${randomBytes(9).toString('hex').toUpperCase()}`;
}

/** Evolution's `source` field: which kind of device produced a message id. */
export function sourceOfId(id: string): 'ios' | 'android' | 'web' | 'desktop' | 'unknown' {
  if (id.startsWith('3EB0') || id.startsWith('BAE5')) return 'web';
  if (id.length > 21) return 'android';
  if (id.startsWith('3A')) return 'ios';
  if (id.startsWith('3F')) return 'desktop';
  return id.length === 0 ? 'unknown' : 'ios';
}
