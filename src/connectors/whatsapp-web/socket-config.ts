// The options a Baileys socket is created with: Evolution's timings, the instance's settings, the configured address.
import { release } from 'node:os';
import { isJidBroadcast, type AuthenticationState, type GroupMetadata, type UserFacingSocketConfig, type WAVersion } from 'baileys';
import type { Settings } from '../../core/instance.js';
import type { Logger } from '../../platform/logger.js';
import type { WaWebSettings } from './options.js';
import { fetchOptions, type BaileysProxy } from './proxy.js';

/** Evolution's socket timings (QR 45 s, keep-alive 30 s); the connect timeout is WA_CONNECT_TIMEOUT_MS (Evolution: 30 s). */
const socketDefaults = { qrTimeout: 45_000, keepAliveIntervalMs: 30_000 };

/** WhatsApp's own websocket address (Baileys' default), used when WA_WEBSOCKET_URL is empty. */
const whatsAppWebSocketUrl = 'wss://web.whatsapp.com/ws/chat';

/** The websocket address the connector reaches: the configured one, else WhatsApp's. */
export function waWebAddress(waWeb: Pick<WaWebSettings, 'webSocketUrl'>): URL {
  return new URL(waWeb.webSocketUrl || whatsAppWebSocketUrl);
}

/** Baileys logs more than we do: its info chatter is our debug, our trace is its debug. */
export function baileysLevel(level: string): string {
  if (level === 'trace') return 'debug';
  if (level === 'debug') return 'info';
  if (level === 'info' || level === 'warn') return 'warn';
  return level;
}

export interface SocketConfigInput {
  auth: AuthenticationState;
  logger: Logger;
  waWeb: WaWebSettings;
  /** Undefined: Baileys' bundled version. */
  version: WAVersion | undefined;
  /** The settings when the socket is created (alwaysOnline and syncFullHistory only apply at creation). */
  settings: Settings;
  /** The settings as they are now, for filters Baileys asks about on every stanza. */
  liveSettings(): Settings;
  /** Linking with a pairing code (the instance has a number). */
  pairing: boolean;
  /** Group metadata the connector keeps, so group sends need no metadata query each time. */
  cachedGroupMetadata?: (jid: string) => Promise<GroupMetadata | undefined>;
  /** The instance's proxy: the websocket, uploads and downloads all go through it. */
  proxy?: BaileysProxy | null;
  overrides?: Partial<UserFacingSocketConfig>;
}

export function socketConfig(input: SocketConfigInput): UserFacingSocketConfig {
  const { waWeb, settings } = input;
  return {
    auth: input.auth,
    logger: input.logger,
    ...(input.version ? { version: input.version } : {}),
    ...(waWeb.webSocketUrl ? { waWebSocketUrl: waWeb.webSocketUrl } : {}),
    // Evolution's browser tuple; pairing codes keep Baileys' default (a platform WhatsApp accepts for codes).
    ...(input.pairing ? {} : { browser: [waWeb.phoneClient, waWeb.phoneName, release()] as [string, string, string] }),
    ...socketDefaults,
    connectTimeoutMs: waWeb.connectTimeoutMs,
    markOnlineOnConnect: settings.alwaysOnline,
    syncFullHistory: settings.syncFullHistory,
    ...(settings.syncFullHistory ? { shouldSyncHistoryMessage: () => true } : {}),
    emitOwnEvents: false,
    generateHighQualityLinkPreview: false,
    // Statuses are only decrypted when readStatus is on (read live, so a settings change applies at once).
    shouldIgnoreJid: (jid: string) => Boolean(isJidBroadcast(jid)) && !input.liveSettings().readStatus,
    ...(input.cachedGroupMetadata ? { cachedGroupMetadata: input.cachedGroupMetadata } : {}),
    ...(input.proxy ? { agent: input.proxy.agent, fetchAgent: input.proxy.agent, options: fetchOptions(input.proxy.dispatcher) } : {}),
    ...input.overrides,
  };
}
