// The settings of the two WhatsApp integrations: WHATSAPP-BAILEYS (WhatsApp Web) and WHATSAPP-BUSINESS (Meta Cloud API).
import { commaList, matching, notBelow, optionalText, text, wholeNumber, withoutTrailingSlashes } from '../declare.js';

const reconnectBaseMs = wholeNumber({
  env: 'WA_RECONNECT_BASE_MS',
  default: 2_000,
  min: 10,
  max: 3_600_000,
  meaning: 'First wait before a WHATSAPP-BAILEYS instance reconnects after a transient close; doubles per failed attempt, with jitter.',
});

/** WHATSAPP-BAILEYS (WhatsApp Web through baileys). */
export const waWeb = {
  phoneClient: text({
    env: 'CONFIG_SESSION_PHONE_CLIENT',
    default: 'Switchboard',
    meaning: 'Client name the phone shows for a linked WHATSAPP-BAILEYS device (first part of the browser tuple).',
  }),
  phoneName: text({ env: 'CONFIG_SESSION_PHONE_NAME', default: 'Chrome', meaning: 'Browser name the phone shows for a linked WHATSAPP-BAILEYS device.' }),
  reconnectBaseMs,
  reconnectMaxMs: wholeNumber({
    env: 'WA_RECONNECT_MAX_MS',
    default: 300_000,
    min: 10,
    max: 86_400_000,
    checks: [notBelow(reconnectBaseMs)],
    meaning: 'Longest wait between WHATSAPP-BAILEYS reconnect attempts.',
  }),
  idleRestartMs: wholeNumber({
    env: 'WA_IDLE_RESTART_MS',
    default: 120_000,
    min: 1_000,
    max: 86_400_000,
    meaning: 'An open WHATSAPP-BAILEYS connection that has heard nothing from WhatsApp (not even keep-alives) for this long is restarted.',
  }),
  connectTimeoutMs: wholeNumber({
    env: 'WA_CONNECT_TIMEOUT_MS',
    default: 30_000,
    min: 500,
    max: 600_000,
    meaning: 'How long one attempt to reach WhatsApp Web may take (DNS, TCP, TLS, the first answer) before it counts as failed and is retried after a wait.',
  }),
  webSocketUrl: text({
    env: 'WA_WEBSOCKET_URL',
    default: '',
    checks: [matching(/^wss?:\/\//, 'must start with ws:// or wss://', { exceptEmpty: true })],
    meaning:
      'WhatsApp Web websocket address (ws:// or wss://); empty means WhatsApp itself. For tests and mock servers; when set, no WhatsApp Web version lookup is made.',
  }),
};

/** WHATSAPP-BUSINESS (Meta Cloud API); the verify token is resolved by the services when unset. */
export const waBusiness = {
  url: text({
    env: 'WA_BUSINESS_URL',
    default: 'https://graph.facebook.com',
    tidy: withoutTrailingSlashes,
    checks: [matching(/^https?:\/\//, 'must start with http:// or https://')],
    meaning: 'Graph API base address for WHATSAPP-BUSINESS instances (without the version).',
  }),
  version: text({
    env: 'WA_BUSINESS_VERSION',
    default: 'v20.0',
    tidy: (version) => (version.startsWith('v') ? version : `v${version}`),
    checks: [matching(/^v\d+\.\d+$/, 'must look like v20.0')],
    meaning: 'Graph API version of every Cloud API call (`21.0` is accepted as `v21.0`).',
  }),
  verifyToken: optionalText({
    env: 'WA_BUSINESS_TOKEN_WEBHOOK',
    shownDefault: '(derived)',
    meaning:
      'Verify token Meta must send to GET /messenger/webhook/meta; answered as `access_token_wa_business` at creation. Unset: a stable token derived from SECRETS_KEY (same on every node, no default anyone can guess).',
  }),
  appSecrets: commaList<string>({
    env: 'WA_BUSINESS_APP_SECRET',
    default: [],
    item: (secret) => secret,
    meaning:
      'Meta app secret that signs webhook posts (X-Hub-Signature-256); a comma list during a rotation. Unset: every POST /messenger/webhook/meta is refused (503).',
  }),
  timeoutMs: wholeNumber({
    env: 'WA_BUSINESS_TIMEOUT_MS',
    default: 20_000,
    min: 100,
    max: 600_000,
    meaning: 'Time limit of one Graph API request; a send that times out is retried.',
  }),
};
