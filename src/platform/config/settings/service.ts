// The service's own settings: HTTP server, storage, logging, media, sending, linking, secrets and operations.
import { hostname } from 'node:os';
import { computed, decimal, flag, matching, optionalText, parsed, text, wholeNumber, withoutTrailingSlashes } from '../declare.js';
import { logLevelFrom, type LogLevel } from '../log-level.js';
import { connectionLimitOf, connectionLimitProblem, schemaProblem } from '../../store/pg-uri.js';

/** The global key opens every instance: as long as instance keys at least, and how to make one when it is not (never the key itself). */
const minGlobalKeyLength = 16;
const strongGlobalKey = (key: string | undefined) =>
  key === undefined || key.length >= minGlobalKeyLength
    ? undefined
    : `must be at least ${minGlobalKeyLength} characters (got ${key.length}); make a strong one with \`openssl rand -hex 24\` or \`node -e "console.log(require('crypto').randomBytes(24).toString('hex'))"\``;

const port = wholeNumber({ env: 'SERVER_PORT', default: 8080, min: 0, max: 65535, meaning: 'HTTP port.' });

const databaseUri = text({
  env: 'DATABASE_CONNECTION_URI',
  default: 'file:./data/switchboard.db',
  checks: [
    matching(/^(file:|postgres(ql)?:\/\/)/, 'must start with file: (SQLite) or postgres:// (PostgreSQL)'),
    (uri) => schemaProblem(uri),
    (uri) => connectionLimitProblem(uri),
  ],
  meaning:
    '`file:<path>` for SQLite or `postgres://…` for PostgreSQL (`?schema=<name>` keeps the tables in that schema, created if missing). Set on its own: moving `DATA_DIR` does not move the database.',
});

export const server = {
  port,
  host: text({ env: 'SERVER_HOST', default: '0.0.0.0', meaning: 'Address to listen on.' }),
  serverUrl: text({
    env: 'SERVER_URL',
    default: computed('http://localhost:<port>', (settingValue) => `http://localhost:${settingValue(port)}`),
    tidy: withoutTrailingSlashes,
    meaning: 'Public base URL, sent as `server_url` in events.',
  }),
  globalApiKey: optionalText({
    env: 'AUTHENTICATION_API_KEY',
    shownDefault: '(generated)',
    checks: [strongGlobalKey],
    meaning:
      'Global API key, 16 characters or more (`openssl rand -hex 24` makes one). When unset, one is generated on first start, stored in `DATA_DIR/global-api-key` and printed once; once set, it wins and that generated file is removed.',
  }),
  exposeApiKeyInEvents: flag({
    env: 'AUTHENTICATION_EXPOSE_IN_FETCH_INSTANCES',
    default: false,
    meaning: 'Put the instance key into event envelopes (`apikey`). Off by default: events never carry credentials unless you opt in.',
  }),
  databaseUri,
  databasePoolSize: wholeNumber({
    env: 'DATABASE_POOL_SIZE',
    default: computed('connection_limit of the URI, else 10', (settingValue) => Math.max(2, connectionLimitOf(settingValue(databaseUri)) ?? 10)),
    min: 2,
    max: 1000,
    meaning:
      "PostgreSQL only: the most connections this node opens to the database (each node of a fleet opens its own, plus one that listens for signals; keep the sum under the server's max_connections). An Evolution URI's `connection_limit` is read when this is unset.",
  }),
  dataDir: text({
    env: 'DATA_DIR',
    default: './data',
    meaning: 'Folder for the generated global key, the secrets key and sandbox media (not the SQLite database: see `DATABASE_CONNECTION_URI`).',
  }),
  logLevel: parsed<LogLevel>({
    env: 'LOG_LEVEL',
    default: 'info',
    parse: logLevelFrom,
    meaning: 'fatal, error, warn, info, debug, trace or silent; `debug` and `trace` also log an access line per API request.',
  }),
  corsOrigin: text({
    env: 'CORS_ORIGIN',
    default: '*',
    meaning: 'Allowed browser origins (comma list or `*`). Requests without an Origin header are always allowed.',
  }),
};

export const media = {
  mediaMaxBytes: wholeNumber({
    env: 'MEDIA_MAX_BYTES',
    default: 64 * 1024 * 1024,
    min: 1024,
    max: 2 * 1024 * 1024 * 1024,
    meaning: 'Largest media accepted (URL, base64 or a multipart file); larger answers 413.',
  }),
  mediaFetchTimeoutMs: wholeNumber({
    env: 'MEDIA_FETCH_TIMEOUT_MS',
    default: 30_000,
    min: 100,
    max: 600_000,
    meaning: 'Time limit for downloading a media URL.',
  }),
  outboundDenyPrivate: flag({
    env: 'OUTBOUND_DENY_PRIVATE',
    default: false,
    meaning: 'Refuse media URLs and webhooks that resolve to private or loopback addresses. Cloud metadata addresses are always refused.',
  }),
};

export const sending = {
  sendExpireAfterMs: wholeNumber({
    env: 'SEND_EXPIRE_AFTER_MS',
    default: 24 * 3600_000,
    min: 1000,
    max: 365 * 24 * 3600_000,
    meaning: 'A queued send not delivered within this time (e.g. instance never linked) becomes ERROR.',
  }),
  sendRetryMaxAttempts: wholeNumber({
    env: 'SEND_RETRY_MAX_ATTEMPTS',
    default: 5,
    min: 1,
    max: 100,
    meaning: 'Attempts for a send that fails transiently before it becomes ERROR.',
  }),
  sendRetryBaseMs: wholeNumber({
    env: 'SEND_RETRY_BASE_MS',
    default: 1000,
    min: 1,
    max: 3600_000,
    meaning: 'First retry wait for a failed send; doubles each attempt.',
  }),
  sendWorkerBusyTurns: wholeNumber({
    env: 'SEND_WORKER_BUSY_TURNS',
    default: 2,
    min: 1,
    max: 100,
    meaning:
      "While API requests keep arriving, the send worker starts its chats' next batches together every this many turns of the event loop: a burst of sends is answered first and delivered from the queue, which drains at full speed after it. 1: every turn.",
  }),
  sendWorkerBusyBatch: wholeNumber({
    env: 'SEND_WORKER_BUSY_BATCH',
    default: 16,
    min: 1,
    max: 50,
    meaning: 'Most sends in one worker batch while API requests keep arriving (50 otherwise).',
  }),
  sendWorkerPollMs: wholeNumber({
    env: 'SEND_WORKER_POLL_MS',
    default: 1000,
    min: 50,
    max: 600_000,
    meaning:
      'How often a node looks, in one query for all its instances, for instances with sends still queued, and has their workers look into their queues. Accepted sends wake their worker at once, on any node of a fleet; the poll only finds what a lost wake-up missed.',
  }),
};

export const linking = {
  sandboxAutoLink: flag({
    env: 'SANDBOX_AUTO_LINK',
    default: false,
    meaning: 'Link SANDBOX instances at creation (with `number`, or a generated one), for demos and tests.',
  }),
  qrcodeLimit: wholeNumber({
    env: 'QRCODE_LIMIT',
    default: 30,
    min: 1,
    max: 1000,
    meaning: 'How many QR codes an unlinked instance shows before it gives up.',
  }),
  qrcodeColor: text({
    env: 'QRCODE_COLOR',
    default: '#198754',
    checks: [(color) => (/^#[0-9a-fA-F]{6}$/.test(color) ? undefined : `must be a colour like #198754 (got "${color}")`)],
    meaning: 'Colour of the QR code image.',
  }),
  qrcodeTtlMs: wholeNumber({
    env: 'QRCODE_TTL_MS',
    default: 60_000,
    min: 1000,
    max: 3600_000,
    meaning: 'How long a sandbox QR code stays valid before it is refreshed.',
  }),
};

export const secrets = {
  secretsKey: optionalText({
    env: 'SECRETS_KEY',
    shownDefault: '(generated)',
    meaning:
      'Base64 32-byte key sealing stored secrets (instance keys, provider tokens). Generated into `DATA_DIR/secrets-key` when unset; set the same value on every node.',
  }),
};

export const operations = {
  eventRetentionMs: decimal({
    env: 'EVENT_RETENTION_DAYS',
    default: 7,
    min: 0.001,
    max: 3650,
    scale: 86400_000,
    meaning:
      'Delivered and cancelled webhook deliveries, and events every destination has handled, are removed after this many days (pending and dead-lettered ones are kept).',
  }),
  metricsEnabled: flag({
    env: 'METRICS_ENABLED',
    default: false,
    meaning:
      'Serve Prometheus metrics at `GET /metrics`: the standard `process_*`/`nodejs_*` ones, and `switchboard_*` (outbox depth, deliveries by result, delivery latency, send queue, per instance). Unauthenticated: expose it only to your monitoring network.',
  }),
  nodeId: text({
    env: 'NODE_ID',
    default: computed('<hostname>-<pid>', () => `${hostname()}-${process.pid}`),
    meaning: 'Name of this node (in logs and queue leases).',
  }),
  nodeAddress: text({
    env: 'NODE_ADDRESS',
    default: computed('http://<hostname>:<port>', (settingValue) => `http://${hostname()}:${settingValue(port)}`),
    tidy: withoutTrailingSlashes,
    meaning:
      "Where the other nodes of a fleet reach this one over HTTP (requests that need an instance's live connection are carried to the node that owns it).",
  }),
};
