// Rate limiting of API requests: per instance key, for the global key, and by client address for requests without a valid key.
import { flag, wholeNumber } from '../declare.js';

export const rateLimit = {
  rateLimitEnabled: flag({
    env: 'RATE_LIMIT_ENABLED',
    default: true,
    meaning:
      'Answer 429 (with `Retry-After`) to a caller past its budget of API requests per RATE_LIMIT_WINDOW_MS: each instance key, the global key and, for requests without a valid key, each client address has its own. `/`, `/health`, `/metrics`, the docs and other routes needing no key are never limited. Counted in memory on each node.',
  }),
  rateLimitWindowMs: wholeNumber({
    env: 'RATE_LIMIT_WINDOW_MS',
    default: 60_000,
    min: 100,
    max: 24 * 3600_000,
    meaning: 'Length of the window the budgets count requests in; a budget starts over when its window ends.',
  }),
  rateLimitMax: wholeNumber({
    env: 'RATE_LIMIT_MAX',
    default: 600,
    min: 1,
    max: 10_000_000,
    meaning:
      "Requests an instance key may make per window (600 a minute is 10 a second: far above what WhatsApp lets an instance send, it stops only runaway loops and retry storms, and leaves room to poll). Each instance's key has its own budget.",
  }),
  rateLimitGlobalKeyMax: wholeNumber({
    env: 'RATE_LIMIT_GLOBAL_KEY_MAX',
    default: 0,
    min: 0,
    max: 10_000_000,
    meaning: "Requests the global key may make per window; 0: unlimited (the global key is the operator's and serves every instance).",
  }),
  rateLimitUnauthenticatedMax: wholeNumber({
    env: 'RATE_LIMIT_UNAUTHENTICATED_MAX',
    default: 60,
    min: 1,
    max: 10_000_000,
    meaning:
      'Requests without a valid key (answered 401) a client address may make per window, so key guessing and 401 floods are bounded. Behind a reverse proxy every client shares its address.',
  }),
};
