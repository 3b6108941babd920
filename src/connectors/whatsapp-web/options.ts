// The settings the WhatsApp Web connector reads (a slice of the service Config) and their documented defaults.
import type { Config } from '../../platform/config.js';

/** WHATSAPP-BAILEYS settings (Config.waWeb). */
export interface WaWebSettings {
  /** First part of the browser tuple the phone shows for the linked device (CONFIG_SESSION_PHONE_CLIENT). */
  phoneClient: string;
  /** Browser name of the tuple (CONFIG_SESSION_PHONE_NAME). */
  phoneName: string;
  /** First wait before reconnecting after a transient close (WA_RECONNECT_BASE_MS). */
  reconnectBaseMs: number;
  /** Longest wait between reconnect attempts (WA_RECONNECT_MAX_MS). */
  reconnectMaxMs: number;
  /** An open connection silent for longer than this is restarted (WA_IDLE_RESTART_MS). */
  idleRestartMs: number;
  /** WhatsApp Web websocket address; empty means WhatsApp's own (WA_WEBSOCKET_URL). */
  webSocketUrl: string;
  /** How long one attempt to reach WhatsApp Web may take before it counts as failed (WA_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs: number;
}

/** What the connector needs from the configuration; `Config` satisfies it once `waWeb` is added there. */
export type WhatsAppWebConfig = Pick<Config, 'qrcodeLimit' | 'qrcodeColor' | 'logLevel'> & {
  waWeb: WaWebSettings;
  /** OUTBOUND_DENY_PRIVATE: whether the instance's proxy may be at a private address (absent: it may). */
  outboundDenyPrivate?: boolean;
};

/** Defaults, for the config module and for tests. */
export const waWebDefaults: WaWebSettings = {
  phoneClient: 'Switchboard',
  phoneName: 'Chrome',
  reconnectBaseMs: 2_000,
  reconnectMaxMs: 300_000,
  idleRestartMs: 120_000,
  webSocketUrl: '',
  connectTimeoutMs: 30_000,
};
