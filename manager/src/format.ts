// Small formatting helpers: addresses as numbers, times as "3 min ago", message bodies as plain text.
import type { StoredMessage } from './api';

export function numberOf(jid: string | undefined | null): string {
  if (!jid) return '';
  return jid.split('@')[0].split(':')[0];
}

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const seconds = Math.max(0, Math.round((now - new Date(iso).getTime()) / 1000));
  if (seconds < 5) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  return new Date(iso).toLocaleString();
}

/** The text a message shows: its body or caption, else its type in brackets. Always plain text, never markup. */
export function messageText(message: StoredMessage): string {
  const content = message.message as Record<string, Record<string, unknown> | string | undefined>;
  if (typeof content.conversation === 'string') return content.conversation;
  for (const value of Object.values(content)) {
    if (value && typeof value === 'object') {
      for (const field of ['text', 'caption', 'name', 'title']) {
        const text = value[field];
        if (typeof text === 'string' && text) return text;
      }
    }
  }
  return `[${message.messageType}]`;
}

export function statusOf(message: StoredMessage): string {
  return message.MessageUpdate[message.MessageUpdate.length - 1]?.status ?? 'PENDING';
}

export function timeOf(message: StoredMessage): string {
  const seconds = Number(message.messageTimestamp);
  return Number.isFinite(seconds) ? new Date(seconds * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : '';
}

/** Every event name of the catalogue (the service's own list, so the picker never misses one). */
export { eventNames } from '../../src/core/event-catalog';
