// What the inbound mappers share: the host to report to, live settings, the address book and the live socket.
import type { ConnectorHost } from '../../../core/connector.js';
import type { Settings } from '../../../core/instance.js';
import type { Logger } from '../../../platform/logger.js';
import type { AddressBook } from '../jids.js';
import type { WaSocket } from '../socket.js';

export interface InboundContext {
  instanceId: string;
  instanceName: string;
  host: ConnectorHost;
  /** The instance's settings as they are now (they change while connected). */
  settings(): Settings;
  addresses: AddressBook;
  socket: WaSocket;
  logger: Logger;
  /** Remembers who sent a group message, so a later markRead can address the receipt. */
  rememberSender(keyId: string, participant: string): void;
}

/** groupsIgnore: group chats are neither reported nor acted on (sending to groups still works). */
export function ignoredChat(ctx: InboundContext, jid: string | null | undefined): boolean {
  if (!jid) return true;
  const settings = ctx.settings();
  if (settings.groupsIgnore && jid.endsWith('@g.us')) return true;
  // Statuses (and broadcast lists) are only processed when readStatus is on.
  if (jid.endsWith('@broadcast') && !settings.readStatus) return true;
  return false;
}

/** Removes undefined values (and Dates → ISO strings, bytes → base64) so a payload is plain JSON. */
export function plain(value: unknown): unknown {
  if (value === undefined || value === null) return value ?? null;
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === 'object') {
    // Long values (protobuf 64-bit numbers) become strings.
    const maybeLong = value as { low?: unknown; high?: unknown; toString?: () => string };
    if (typeof maybeLong.low === 'number' && typeof maybeLong.high === 'number' && typeof maybeLong.toString === 'function') {
      return maybeLong.toString();
    }
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (inner === undefined || typeof inner === 'function') continue;
      out[key] = plain(inner);
    }
    return out;
  }
  return value;
}
