// The settings the WhatsApp Web connector reads (a slice of the service Config) and their documented defaults.
import type { Config } from '../../config.js';

/** What the connector needs from the configuration; `Config` satisfies it once the WA settings are added there. */
export type WhatsAppWebConfig = Pick<Config, 'qrcodeLimit' | 'qrcodeColor' | 'logLevel'> & {
  /** First part of the browser tuple shown in the phone's linked devices (CONFIG_SESSION_PHONE_CLIENT). */
  sessionPhoneClient: string;
  /** Browser name of the tuple (CONFIG_SESSION_PHONE_NAME). */
  sessionPhoneName: string;
  /** First wait before reconnecting after a transient close (WA_RECONNECT_BASE_MS). */
  waReconnectBaseMs: number;
  /** Longest wait between reconnect attempts (WA_RECONNECT_MAX_MS). */
  waReconnectMaxMs: number;
  /** An open connection silent for longer than this is restarted (WA_IDLE_RESTART_MS). */
  waIdleRestartMs: number;
  /** WhatsApp Web websocket address; empty means WhatsApp's own (WA_WEBSOCKET_URL). */
  waWebSocketUrl: string;
};

/** Defaults, for the lead's config module and for tests. */
export const whatsAppWebDefaults = {
  sessionPhoneClient: 'Switchboard',
  sessionPhoneName: 'Chrome',
  waReconnectBaseMs: 2_000,
  waReconnectMaxMs: 300_000,
  waIdleRestartMs: 120_000,
  waWebSocketUrl: '',
} as const;
