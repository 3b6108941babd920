// Every setting of the service: its environment name, default, meaning and validation, read in one place.
import { hostname } from 'node:os';
import { secretProblem } from './util/webhook-secret.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  port: number;
  host: string;
  serverUrl: string;
  globalApiKey: string | undefined;
  exposeApiKeyInEvents: boolean;
  databaseUri: string;
  dataDir: string;
  logLevel: LogLevel;
  corsOrigin: string;
  mediaMaxBytes: number;
  mediaFetchTimeoutMs: number;
  outboundDenyPrivate: boolean;
  sendExpireAfterMs: number;
  sendRetryMaxAttempts: number;
  sendRetryBaseMs: number;
  sendWorkerBusyTurns: number;
  sendWorkerBusyBatch: number;
  sandboxAutoLink: boolean;
  qrcodeLimit: number;
  qrcodeColor: string;
  qrcodeTtlMs: number;
  webhookGlobalEnabled: boolean;
  webhookGlobalUrl: string | undefined;
  webhookGlobalByEvents: boolean;
  webhookGlobalEvents: Record<string, boolean>;
  webhookRequestTimeoutMs: number;
  webhookDeliveryThread: boolean;
  webhookRetryMaxAttempts: number;
  webhookRetryInitialDelayMs: number;
  webhookRetryMaxDelayMs: number;
  webhookRetryBackoffFactor: number;
  webhookRetryJitterFactor: number;
  webhookNonRetryableStatuses: number[];
  webhookSigningSecret: string | undefined;
  nodeId: string;
  secretsKey: string | undefined;
  metricsEnabled: boolean;
  eventRetentionMs: number;
  websocketEnabled: boolean;
  websocketGlobalEvents: boolean;
  /** WHATSAPP-BUSINESS (Meta Cloud API); the verify token is resolved by the services when unset. */
  waBusiness: { url: string; version: string; verifyToken: string | undefined; appSecrets: string[]; timeoutMs: number };
  /** WHATSAPP-BAILEYS (WhatsApp Web through baileys). */
  waWeb: { phoneClient: string; phoneName: string; reconnectBaseMs: number; reconnectMaxMs: number; idleRestartMs: number; webSocketUrl: string };
  rabbitmqEnabled: boolean;
  rabbitmqUri: string | undefined;
  rabbitmqExchangeName: string;
  rabbitmqGlobalEnabled: boolean;
  rabbitmqGlobalEvents: Record<string, boolean>;
  rabbitmqPrefixKey: string;
  rabbitmqDeclareQueues: boolean;
  natsEnabled: boolean;
  natsUrl: string | undefined;
  natsGlobalEnabled: boolean;
  natsGlobalEvents: Record<string, boolean>;
  natsPrefixKey: string;
  natsStream: string;
  natsStreamMaxAgeMs: number;
}

/** One documented setting; the README's configuration table is generated from this list. */
export interface SettingDoc {
  env: string;
  default: string;
  meaning: string;
}

export const settingDocs: SettingDoc[] = [
  { env: 'SERVER_PORT', default: '8080', meaning: 'HTTP port.' },
  { env: 'SERVER_HOST', default: '0.0.0.0', meaning: 'Address to listen on.' },
  { env: 'SERVER_URL', default: 'http://localhost:<port>', meaning: 'Public base URL, sent as `server_url` in events.' },
  { env: 'AUTHENTICATION_API_KEY', default: '(generated)', meaning: 'Global API key. When unset, one is generated on first start, stored in `DATA_DIR/global-api-key` and printed once.' },
  { env: 'AUTHENTICATION_EXPOSE_IN_FETCH_INSTANCES', default: 'false', meaning: 'Put the instance key into event envelopes (`apikey`). Off by default: events never carry credentials unless you opt in.' },
  { env: 'DATABASE_CONNECTION_URI', default: 'file:./data/switchboard.db', meaning: '`file:<path>` for SQLite or `postgres://…` for PostgreSQL. Set on its own: moving `DATA_DIR` does not move the database.' },
  { env: 'DATA_DIR', default: './data', meaning: 'Folder for the generated global key, the secrets key and sandbox media (not the SQLite database: see `DATABASE_CONNECTION_URI`).' },
  { env: 'LOG_LEVEL', default: 'info', meaning: 'fatal, error, warn, info, debug, trace or silent; `debug` and `trace` also log an access line per API request.' },
  { env: 'CORS_ORIGIN', default: '*', meaning: 'Allowed browser origins (comma list or `*`). Requests without an Origin header are always allowed.' },
  { env: 'MEDIA_MAX_BYTES', default: '67108864', meaning: 'Largest media accepted (URL or base64); larger answers 413.' },
  { env: 'MEDIA_FETCH_TIMEOUT_MS', default: '30000', meaning: 'Time limit for downloading a media URL.' },
  { env: 'OUTBOUND_DENY_PRIVATE', default: 'false', meaning: 'Refuse media URLs and webhooks that resolve to private or loopback addresses. Cloud metadata addresses are always refused.' },
  { env: 'SEND_EXPIRE_AFTER_MS', default: '86400000', meaning: 'A queued send not delivered within this time (e.g. instance never linked) becomes ERROR.' },
  { env: 'SEND_RETRY_MAX_ATTEMPTS', default: '5', meaning: 'Attempts for a send that fails transiently before it becomes ERROR.' },
  { env: 'SEND_RETRY_BASE_MS', default: '1000', meaning: 'First retry wait for a failed send; doubles each attempt.' },
  {
    env: 'SEND_WORKER_BUSY_TURNS',
    default: '2',
    meaning:
      'While API requests keep arriving, the send worker starts its chats\' next batches together every this many turns of the event loop: a burst of sends is answered first and delivered from the queue, which drains at full speed after it. 1: every turn.',
  },
  { env: 'SEND_WORKER_BUSY_BATCH', default: '16', meaning: 'Most sends in one worker batch while API requests keep arriving (50 otherwise).' },
  { env: 'SANDBOX_AUTO_LINK', default: 'false', meaning: 'Link SANDBOX instances at creation (with `number`, or a generated one), for demos and tests.' },
  { env: 'QRCODE_LIMIT', default: '30', meaning: 'How many QR codes an unlinked instance shows before it gives up.' },
  { env: 'QRCODE_COLOR', default: '#198754', meaning: 'Colour of the QR code image.' },
  { env: 'QRCODE_TTL_MS', default: '60000', meaning: 'How long a sandbox QR code stays valid before it is refreshed.' },
  { env: 'WEBHOOK_GLOBAL_ENABLED', default: 'false', meaning: 'Send every instance\'s events to WEBHOOK_GLOBAL_URL too.' },
  { env: 'WEBHOOK_GLOBAL_URL', default: '', meaning: 'The global webhook address.' },
  { env: 'WEBHOOK_GLOBAL_WEBHOOK_BY_EVENTS', default: 'false', meaning: 'Append the event suffix (`/messages-upsert`) to the global webhook URL.' },
  { env: 'WEBHOOK_EVENTS_<NAME>', default: '(all on)', meaning: 'Global webhook filter: set `WEBHOOK_EVENTS_MESSAGES_UPSERT=false` to leave an event out. When any is `true`, only those set `true` are sent.' },
  { env: 'WEBHOOK_REQUEST_TIMEOUT_MS', default: '30000', meaning: 'Time limit of one webhook request.' },
  {
    env: 'WEBHOOK_DELIVERY_THREAD',
    default: 'true',
    meaning: 'Send webhook requests from a worker thread, so deliveries keep their pace while the API is busy (`false`: from the main thread).',
  },
  { env: 'WEBHOOK_RETRY_MAX_ATTEMPTS', default: '10', meaning: 'Attempts per delivery before it is dead-lettered.' },
  { env: 'WEBHOOK_RETRY_INITIAL_DELAY_SECONDS', default: '10', meaning: 'Wait after the first failed attempt.' },
  { env: 'WEBHOOK_RETRY_MAX_DELAY_SECONDS', default: '21600', meaning: 'Longest wait between attempts.' },
  { env: 'WEBHOOK_RETRY_BACKOFF_FACTOR', default: '4', meaning: 'Growth of the wait per attempt (10 attempts span about a day with the defaults).' },
  { env: 'WEBHOOK_RETRY_JITTER_FACTOR', default: '0.2', meaning: 'Random spread applied to each wait (±20 %).' },
  { env: 'WEBHOOK_RETRY_NON_RETRYABLE_STATUS_CODES', default: '400,401,403,404,422', meaning: 'Receiver statuses that dead-letter a delivery at once.' },
  { env: 'WEBHOOK_SIGNING_SECRET', default: '', meaning: 'Standard Webhooks secret (`whsec_…`) used to sign deliveries of webhooks without a secret of their own, and the global webhook.' },
  { env: 'SECRETS_KEY', default: '(generated)', meaning: 'Base64 32-byte key sealing stored secrets (instance keys, provider tokens). Generated into `DATA_DIR/secrets-key` when unset; set the same value on every node.' },
  { env: 'WEBSOCKET_ENABLED', default: 'false', meaning: 'Serve socket.io on the HTTP port (path `/socket.io`): namespace `/<instance name>` per instance, for the global key or that instance\'s own key, filtered by `websocket/set`. The key goes in the handshake (`auth.apikey`, `apikey` header or query); no address skips it.' },
  { env: 'WEBSOCKET_GLOBAL_EVENTS', default: 'false', meaning: 'With WEBSOCKET_ENABLED: every event of every instance, unfiltered, also goes to the default namespace `/` (global key only). When off, `/` refuses connections.' },
  { env: 'CONFIG_SESSION_PHONE_CLIENT', default: 'Switchboard', meaning: 'Client name the phone shows for a linked WHATSAPP-BAILEYS device (first part of the browser tuple).' },
  { env: 'CONFIG_SESSION_PHONE_NAME', default: 'Chrome', meaning: 'Browser name the phone shows for a linked WHATSAPP-BAILEYS device.' },
  { env: 'WA_RECONNECT_BASE_MS', default: '2000', meaning: 'First wait before a WHATSAPP-BAILEYS instance reconnects after a transient close; doubles per failed attempt, with jitter.' },
  { env: 'WA_RECONNECT_MAX_MS', default: '300000', meaning: 'Longest wait between WHATSAPP-BAILEYS reconnect attempts.' },
  { env: 'WA_IDLE_RESTART_MS', default: '120000', meaning: 'An open WHATSAPP-BAILEYS connection that has heard nothing from WhatsApp (not even keep-alives) for this long is restarted.' },
  { env: 'WA_WEBSOCKET_URL', default: '', meaning: 'WhatsApp Web websocket address (ws:// or wss://); empty means WhatsApp itself. For tests and mock servers; when set, no WhatsApp Web version lookup is made.' },
  { env: 'WA_BUSINESS_URL', default: 'https://graph.facebook.com', meaning: 'Graph API base address for WHATSAPP-BUSINESS instances (without the version).' },
  { env: 'WA_BUSINESS_VERSION', default: 'v20.0', meaning: 'Graph API version of every Cloud API call (`21.0` is accepted as `v21.0`).' },
  { env: 'WA_BUSINESS_TOKEN_WEBHOOK', default: '(derived)', meaning: 'Verify token Meta must send to GET /messenger/webhook/meta; answered as `access_token_wa_business` at creation. Unset: a stable token derived from SECRETS_KEY (same on every node, no default anyone can guess).' },
  { env: 'WA_BUSINESS_APP_SECRET', default: '', meaning: 'Meta app secret that signs webhook posts (X-Hub-Signature-256); a comma list during a rotation. Unset: every POST /messenger/webhook/meta is refused (503).' },
  { env: 'WA_BUSINESS_TIMEOUT_MS', default: '20000', meaning: 'Time limit of one Graph API request; a send that times out is retried.' },
  { env: 'RABBITMQ_ENABLED', default: 'false', meaning: 'Publish events to RabbitMQ (publisher confirms; an event leaves the outbox only once confirmed).' },
  { env: 'RABBITMQ_URI', default: '', meaning: '`amqp(s)://user:pass@host:5672/vhost`; required when RABBITMQ_ENABLED=true.' },
  { env: 'RABBITMQ_EXCHANGE_NAME', default: 'evolution_exchange', meaning: 'Durable topic exchange of the global events (routing key = event name, e.g. `messages.upsert`). Instance events go to the exchange named after the instance.' },
  { env: 'RABBITMQ_GLOBAL_ENABLED', default: 'false', meaning: 'Send every instance\'s events to RABBITMQ_EXCHANGE_NAME too.' },
  { env: 'RABBITMQ_EVENTS_<NAME>', default: '(all on)', meaning: 'Global RabbitMQ filter, same rule as WEBHOOK_EVENTS_<NAME>.' },
  { env: 'RABBITMQ_PREFIX_KEY', default: '', meaning: 'Prefix of the global queue names (`<prefix>.<event>`).' },
  { env: 'RABBITMQ_DECLARE_QUEUES', default: 'true', meaning: 'Declare and bind Evolution\'s durable quorum queues `<instance>.<event>` and `[<prefix>.]<event>`, so events are kept until consumed. Off: exchanges only; bind your own queues.' },
  { env: 'NATS_ENABLED', default: 'false', meaning: 'Publish events to NATS JetStream (subject `<instance>.<event>`, acknowledged by the stream, deduplicated by Nats-Msg-Id).' },
  { env: 'NATS_URL', default: '', meaning: '`nats://[user:pass@]host:4222` (comma list for a cluster); Evolution\'s NATS_URI is read too. Required when NATS_ENABLED=true.' },
  { env: 'NATS_GLOBAL_ENABLED', default: 'false', meaning: 'Send every instance\'s events to the global subjects `[<NATS_PREFIX_KEY>.]<event>` too.' },
  { env: 'NATS_EVENTS_<NAME>', default: '(all on)', meaning: 'Global NATS filter, same rule as WEBHOOK_EVENTS_<NAME>.' },
  { env: 'NATS_PREFIX_KEY', default: '', meaning: 'Prefix of the global subjects.' },
  { env: 'NATS_STREAM', default: 'SWITCHBOARD', meaning: 'JetStream stream holding the events; created when missing, subjects `<instance>.>` added as needed.' },
  { env: 'NATS_STREAM_MAX_AGE_SECONDS', default: '604800', meaning: 'Age limit given to the stream when Switchboard creates it (0 = none).' },
  { env: 'EVENT_RETENTION_DAYS', default: '7', meaning: 'Delivered and cancelled webhook deliveries, and events every destination has handled, are removed after this many days (pending and dead-lettered ones are kept).' },
  { env: 'METRICS_ENABLED', default: 'false', meaning: 'Serve Prometheus metrics at `GET /metrics` (outbox depth, deliveries by result, delivery latency, send queue, per instance). Unauthenticated: expose it only to your monitoring network.' },
  { env: 'NODE_ID', default: '<hostname>-<pid>', meaning: 'Name of this node (in logs and queue leases).' },
];

const logLevels: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

class ConfigReader {
  readonly problems: string[] = [];
  constructor(private readonly env: Record<string, string | undefined>) {}

  string(name: string, fallback: string): string {
    const value = this.env[name];
    return value === undefined || value === '' ? fallback : value;
  }

  optional(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value === '' ? undefined : value;
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.env[name];
    if (value === undefined || value === '') return fallback;
    const lower = value.toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(lower)) return true;
    if (['false', '0', 'no', 'off'].includes(lower)) return false;
    this.problems.push(`${name} must be true or false (got "${value}")`);
    return fallback;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const value = this.env[name];
    if (value === undefined || value === '') return fallback;
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
      this.problems.push(`${name} must be a whole number from ${min} to ${max} (got "${value}")`);
      return fallback;
    }
    return parsed;
  }

  number(name: string, fallback: number, min: number, max: number): number {
    const value = this.env[name];
    if (value === undefined || value === '') return fallback;
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed < min || parsed > max) {
      this.problems.push(`${name} must be a number from ${min} to ${max} (got "${value}")`);
      return fallback;
    }
    return parsed;
  }
}

export class ConfigError extends Error {}

/** Reads and validates the configuration; throws a ConfigError listing every bad setting. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const read = new ConfigReader(env);
  const port = read.int('SERVER_PORT', 8080, 0, 65535);
  const rawLevel = read.string('LOG_LEVEL', 'info').toLowerCase();
  // Evolution deployments carry lists such as "ERROR,WARN,INFO"; map them to the most verbose pino level named.
  const logLevel = logLevels.includes(rawLevel as LogLevel)
    ? (rawLevel as LogLevel)
    : rawLevel.includes('debug') || rawLevel.includes('verbose')
      ? 'debug'
      : rawLevel.includes('info') || rawLevel.includes('log')
        ? 'info'
        : rawLevel.includes('warn')
          ? 'warn'
          : rawLevel.includes('error')
            ? 'error'
            : 'info';
  const databaseUri = read.string('DATABASE_CONNECTION_URI', 'file:./data/switchboard.db');
  if (!/^(file:|postgres(ql)?:\/\/)/.test(databaseUri)) {
    read.problems.push('DATABASE_CONNECTION_URI must start with file: (SQLite) or postgres:// (PostgreSQL)');
  }
  const globalUrl = read.optional('WEBHOOK_GLOBAL_URL');
  if (globalUrl !== undefined && !/^https?:\/\//.test(globalUrl)) {
    read.problems.push('WEBHOOK_GLOBAL_URL must start with http:// or https://');
  }
  const statuses = read.string('WEBHOOK_RETRY_NON_RETRYABLE_STATUS_CODES', '400,401,403,404,422');
  const nonRetryable = statuses
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number);
  if (nonRetryable.some((n) => !Number.isInteger(n) || n < 100 || n > 599)) {
    read.problems.push('WEBHOOK_RETRY_NON_RETRYABLE_STATUS_CODES must be a comma list of HTTP statuses');
  }
  const signingSecret = read.optional('WEBHOOK_SIGNING_SECRET');
  const signingSecretProblem = signingSecret === undefined ? undefined : secretProblem(signingSecret);
  if (signingSecretProblem) read.problems.push(`WEBHOOK_SIGNING_SECRET ${signingSecretProblem}`);

  const waBusinessUrl = read.string('WA_BUSINESS_URL', 'https://graph.facebook.com').replace(/\/+$/, '');
  if (!/^https?:\/\//.test(waBusinessUrl)) read.problems.push('WA_BUSINESS_URL must start with http:// or https://');
  const waBusinessVersion = read.string('WA_BUSINESS_VERSION', 'v20.0');
  if (!/^v?\d+\.\d+$/.test(waBusinessVersion)) read.problems.push('WA_BUSINESS_VERSION must look like v20.0');
  const eventFilter = (prefix: string): Record<string, boolean> => {
    const filter: Record<string, boolean> = {};
    for (const [key, value] of Object.entries(env)) {
      const match = new RegExp(`^${prefix}_EVENTS_([A-Z0-9_]+)$`).exec(key);
      if (match && value !== undefined && value !== '') filter[match[1]] = read.bool(key, true);
    }
    return filter;
  };
  const webhookGlobalEvents = eventFilter('WEBHOOK');
  // Evolution's error-hook switches share the prefix but are not event filters.
  delete webhookGlobalEvents.ERRORS;
  delete webhookGlobalEvents.ERRORS_WEBHOOK;
  const rabbitmqEnabled = read.bool('RABBITMQ_ENABLED', false);
  const rabbitmqUri = read.optional('RABBITMQ_URI');
  if (rabbitmqEnabled && !rabbitmqUri) read.problems.push('RABBITMQ_URI is required when RABBITMQ_ENABLED=true');
  if (rabbitmqUri !== undefined && !/^amqps?:\/\//.test(rabbitmqUri)) read.problems.push('RABBITMQ_URI must start with amqp:// or amqps://');
  const natsEnabled = read.bool('NATS_ENABLED', false);
  const natsUrl = read.optional('NATS_URL') ?? read.optional('NATS_URI');
  if (natsEnabled && !natsUrl) read.problems.push('NATS_URL (or NATS_URI) is required when NATS_ENABLED=true');
  const natsStream = read.string('NATS_STREAM', 'SWITCHBOARD');
  if (!/^[A-Za-z0-9_-]+$/.test(natsStream)) read.problems.push('NATS_STREAM may hold letters, digits, - and _ only');
  const natsPrefixKey = read.string('NATS_PREFIX_KEY', '');
  if (natsPrefixKey && !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(natsPrefixKey)) {
    read.problems.push('NATS_PREFIX_KEY must be dot-separated words (no spaces or wildcards)');
  }
  const waWebSocketUrl = read.string('WA_WEBSOCKET_URL', '');
  if (waWebSocketUrl !== '' && !/^wss?:\/\//.test(waWebSocketUrl)) read.problems.push('WA_WEBSOCKET_URL must start with ws:// or wss://');
  const waReconnectBaseMs = read.int('WA_RECONNECT_BASE_MS', 2_000, 10, 3_600_000);
  const waReconnectMaxMs = read.int('WA_RECONNECT_MAX_MS', 300_000, 10, 86_400_000);
  if (waReconnectMaxMs < waReconnectBaseMs) read.problems.push('WA_RECONNECT_MAX_MS must not be below WA_RECONNECT_BASE_MS');
  const qrcodeColor = read.string('QRCODE_COLOR', '#198754');
  if (!/^#[0-9a-fA-F]{6}$/.test(qrcodeColor)) read.problems.push(`QRCODE_COLOR must be a colour like #198754 (got "${qrcodeColor}")`);

  const config: Config = {
    port,
    host: read.string('SERVER_HOST', '0.0.0.0'),
    serverUrl: read.string('SERVER_URL', `http://localhost:${port}`).replace(/\/+$/, ''),
    globalApiKey: read.optional('AUTHENTICATION_API_KEY'),
    exposeApiKeyInEvents: read.bool('AUTHENTICATION_EXPOSE_IN_FETCH_INSTANCES', false),
    databaseUri,
    dataDir: read.string('DATA_DIR', './data'),
    logLevel,
    corsOrigin: read.string('CORS_ORIGIN', '*'),
    mediaMaxBytes: read.int('MEDIA_MAX_BYTES', 64 * 1024 * 1024, 1024, 2 * 1024 * 1024 * 1024),
    mediaFetchTimeoutMs: read.int('MEDIA_FETCH_TIMEOUT_MS', 30_000, 100, 600_000),
    outboundDenyPrivate: read.bool('OUTBOUND_DENY_PRIVATE', false),
    sendExpireAfterMs: read.int('SEND_EXPIRE_AFTER_MS', 24 * 3600_000, 1000, 365 * 24 * 3600_000),
    sendRetryMaxAttempts: read.int('SEND_RETRY_MAX_ATTEMPTS', 5, 1, 100),
    sendRetryBaseMs: read.int('SEND_RETRY_BASE_MS', 1000, 1, 3600_000),
    sendWorkerBusyTurns: read.int('SEND_WORKER_BUSY_TURNS', 2, 1, 100),
    sendWorkerBusyBatch: read.int('SEND_WORKER_BUSY_BATCH', 16, 1, 50),
    sandboxAutoLink: read.bool('SANDBOX_AUTO_LINK', false),
    qrcodeLimit: read.int('QRCODE_LIMIT', 30, 1, 1000),
    qrcodeColor,
    qrcodeTtlMs: read.int('QRCODE_TTL_MS', 60_000, 1000, 3600_000),
    webhookGlobalEnabled: read.bool('WEBHOOK_GLOBAL_ENABLED', false),
    webhookGlobalUrl: globalUrl,
    webhookGlobalByEvents: read.bool('WEBHOOK_GLOBAL_WEBHOOK_BY_EVENTS', false),
    webhookGlobalEvents,
    webhookRequestTimeoutMs: read.int('WEBHOOK_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
    webhookDeliveryThread: read.bool('WEBHOOK_DELIVERY_THREAD', true),
    webhookRetryMaxAttempts: read.int('WEBHOOK_RETRY_MAX_ATTEMPTS', 10, 1, 100),
    webhookRetryInitialDelayMs: read.number('WEBHOOK_RETRY_INITIAL_DELAY_SECONDS', 10, 0.001, 86400) * 1000,
    webhookRetryMaxDelayMs: read.number('WEBHOOK_RETRY_MAX_DELAY_SECONDS', 21600, 0.001, 7 * 86400) * 1000,
    webhookRetryBackoffFactor: read.number('WEBHOOK_RETRY_BACKOFF_FACTOR', 4, 1, 100),
    webhookRetryJitterFactor: read.number('WEBHOOK_RETRY_JITTER_FACTOR', 0.2, 0, 1),
    webhookNonRetryableStatuses: nonRetryable,
    webhookSigningSecret: signingSecret,
    nodeId: read.string('NODE_ID', `${hostname()}-${process.pid}`),
    secretsKey: read.optional('SECRETS_KEY'),
    metricsEnabled: read.bool('METRICS_ENABLED', false),
    eventRetentionMs: read.number('EVENT_RETENTION_DAYS', 7, 0.001, 3650) * 86400_000,
    websocketEnabled: read.bool('WEBSOCKET_ENABLED', false),
    websocketGlobalEvents: read.bool('WEBSOCKET_GLOBAL_EVENTS', false),
    waBusiness: {
      url: waBusinessUrl,
      version: waBusinessVersion.startsWith('v') ? waBusinessVersion : `v${waBusinessVersion}`,
      verifyToken: read.optional('WA_BUSINESS_TOKEN_WEBHOOK'),
      appSecrets: read
        .string('WA_BUSINESS_APP_SECRET', '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      timeoutMs: read.int('WA_BUSINESS_TIMEOUT_MS', 20_000, 100, 600_000),
    },
    waWeb: {
      phoneClient: read.string('CONFIG_SESSION_PHONE_CLIENT', 'Switchboard'),
      phoneName: read.string('CONFIG_SESSION_PHONE_NAME', 'Chrome'),
      reconnectBaseMs: waReconnectBaseMs,
      reconnectMaxMs: waReconnectMaxMs,
      idleRestartMs: read.int('WA_IDLE_RESTART_MS', 120_000, 1_000, 86_400_000),
      webSocketUrl: waWebSocketUrl,
    },
    rabbitmqEnabled,
    rabbitmqUri,
    rabbitmqExchangeName: read.string('RABBITMQ_EXCHANGE_NAME', 'evolution_exchange'),
    rabbitmqGlobalEnabled: read.bool('RABBITMQ_GLOBAL_ENABLED', false),
    rabbitmqGlobalEvents: eventFilter('RABBITMQ'),
    rabbitmqPrefixKey: read.string('RABBITMQ_PREFIX_KEY', ''),
    rabbitmqDeclareQueues: read.bool('RABBITMQ_DECLARE_QUEUES', true),
    natsEnabled,
    natsUrl,
    natsGlobalEnabled: read.bool('NATS_GLOBAL_ENABLED', false),
    natsGlobalEvents: eventFilter('NATS'),
    natsPrefixKey,
    natsStream,
    natsStreamMaxAgeMs: read.int('NATS_STREAM_MAX_AGE_SECONDS', 7 * 86400, 0, 3650 * 86400) * 1000,
  };
  if (read.problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n- ${read.problems.join('\n- ')}`);
  }
  return config;
}
