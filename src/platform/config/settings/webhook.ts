// The webhook settings: the global webhook, its event filter, request limits, retries and signing.
import { secretProblem } from '../../util/webhook-secret.js';
import { commaList, decimal, eventFilter, flag, matching, optionalText, wholeNumber } from '../declare.js';

export const webhook = {
  webhookGlobalEnabled: flag({ env: 'WEBHOOK_GLOBAL_ENABLED', default: false, meaning: "Send every instance's events to WEBHOOK_GLOBAL_URL too." }),
  webhookGlobalUrl: optionalText({
    env: 'WEBHOOK_GLOBAL_URL',
    checks: [matching(/^https?:\/\//, 'must start with http:// or https://')],
    meaning: 'The global webhook address.',
  }),
  webhookGlobalByEvents: flag({
    env: 'WEBHOOK_GLOBAL_WEBHOOK_BY_EVENTS',
    default: false,
    meaning: 'Append the event suffix (`/messages-upsert`) to the global webhook URL.',
  }),
  webhookGlobalEvents: eventFilter({
    prefix: 'WEBHOOK',
    // Evolution's error-hook switches share the prefix but are not event filters.
    ignored: ['ERRORS', 'ERRORS_WEBHOOK'],
    meaning: 'Global webhook filter: set `WEBHOOK_EVENTS_MESSAGES_UPSERT=false` to leave an event out. When any is `true`, only those set `true` are sent.',
  }),
  webhookRequestTimeoutMs: wholeNumber({
    env: 'WEBHOOK_REQUEST_TIMEOUT_MS',
    default: 30_000,
    min: 100,
    max: 600_000,
    meaning: 'Time limit of one webhook request.',
  }),
  webhookDeliveryThread: flag({
    env: 'WEBHOOK_DELIVERY_THREAD',
    default: true,
    meaning: 'Send webhook requests from a worker thread, so deliveries keep their pace while the API is busy (`false`: from the main thread).',
  }),
  webhookRetryMaxAttempts: wholeNumber({
    env: 'WEBHOOK_RETRY_MAX_ATTEMPTS',
    default: 10,
    min: 1,
    max: 100,
    meaning: 'Attempts per delivery before it is dead-lettered.',
  }),
  webhookRetryInitialDelayMs: decimal({
    env: 'WEBHOOK_RETRY_INITIAL_DELAY_SECONDS',
    default: 10,
    min: 0.001,
    max: 86400,
    scale: 1000,
    meaning: 'Wait after the first failed attempt.',
  }),
  webhookRetryMaxDelayMs: decimal({
    env: 'WEBHOOK_RETRY_MAX_DELAY_SECONDS',
    default: 21600,
    min: 0.001,
    max: 7 * 86400,
    scale: 1000,
    meaning: 'Longest wait between attempts.',
  }),
  webhookRetryBackoffFactor: decimal({
    env: 'WEBHOOK_RETRY_BACKOFF_FACTOR',
    default: 4,
    min: 1,
    max: 100,
    meaning: 'Growth of the wait per attempt (10 attempts span about a day with the defaults).',
  }),
  webhookRetryJitterFactor: decimal({
    env: 'WEBHOOK_RETRY_JITTER_FACTOR',
    default: 0.2,
    min: 0,
    max: 1,
    meaning: 'Random spread applied to each wait (±20 %).',
  }),
  webhookNonRetryableStatuses: commaList({
    env: 'WEBHOOK_RETRY_NON_RETRYABLE_STATUS_CODES',
    default: [400, 401, 403, 404, 422],
    item: Number,
    checks: [(statuses) => (statuses.some((n) => !Number.isInteger(n) || n < 100 || n > 599) ? 'must be a comma list of HTTP statuses' : undefined)],
    meaning: 'Receiver statuses that dead-letter a delivery at once.',
  }),
  webhookSigningSecret: optionalText({
    env: 'WEBHOOK_SIGNING_SECRET',
    checks: [(secret) => (secret === undefined ? undefined : secretProblem(secret))],
    meaning: 'Standard Webhooks secret (`whsec_…`) used to sign deliveries of webhooks without a secret of their own, and the global webhook.',
  }),
};
