// Rate limiting of API requests per caller (instance key, global key, or client address without a valid key), answered 429 in Evolution's envelope.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { ApiKeyCallers } from './auth.js';
import { isPublicRoute } from './auth.js';
import { envelope } from './error-envelope.js';

export interface RateLimitSettings {
  rateLimitEnabled: boolean;
  rateLimitWindowMs: number;
  /** Per instance key. */
  rateLimitMax: number;
  /** For the global key; 0: unlimited. */
  rateLimitGlobalKeyMax: number;
  /** Per client address, for requests without a valid key. */
  rateLimitUnauthenticatedMax: number;
}

/** Whose budget a request counts against, and how it is named in the 429's message. */
const callerKinds = {
  instance: 'this instance key',
  global: 'the global key',
  address: 'requests without a valid API key from this address',
} as const;
type CallerKind = keyof typeof callerKinds;

/** Most budgets kept at once (least recently used go first). */
const trackedCallers = 10_000;

/**
 * Meters every request to a route that needs a key, before it is authorised (so 401 and 403 floods are metered too),
 * against its caller's budget. Register it before the auth hook: both read the caller through `callers`, which
 * checks the key once per request. Counts are kept in this process's memory.
 */
export async function registerRateLimit(app: FastifyInstance, settings: RateLimitSettings, callers: ApiKeyCallers): Promise<void> {
  if (!settings.rateLimitEnabled) return;
  const budgets: Record<CallerKind, number> = {
    instance: settings.rateLimitMax,
    global: settings.rateLimitGlobalKeyMax,
    address: settings.rateLimitUnauthenticatedMax,
  };
  const kindOf = (key: string): CallerKind => key.slice(0, key.indexOf(':')) as CallerKind;
  const callerKey = (request: FastifyRequest): string => {
    const principal = callers.of(request);
    if (!principal) return `address:${normalizeIP(request.ip)}`;
    return principal.kind === 'global' ? 'global:' : `instance:${principal.instance.id}`;
  };
  await app.register(fastifyRateLimit, { global: false, cache: trackedCallers });
  const meter = app.createRateLimit({
    timeWindow: settings.rateLimitWindowMs,
    keyGenerator: callerKey,
    allowList: (_request, key) => budgets[kindOf(key)] === 0,
    max: (_request, key) => budgets[kindOf(key)],
  });

  /** Meters the request; answers whether it was answered 429 here. */
  const limitRequest = async (request: FastifyRequest, reply: FastifyReply): Promise<boolean> => {
    const verdict = await meter(request);
    if (verdict.isAllowed) return false;
    const resetSeconds = Math.max(1, verdict.ttlInSeconds);
    reply.header('x-ratelimit-limit', verdict.max);
    reply.header('x-ratelimit-remaining', verdict.remaining);
    reply.header('x-ratelimit-reset', resetSeconds);
    if (!verdict.isExceeded) return false;
    const caller = callerKinds[kindOf(verdict.key)];
    const message = `too many requests for ${caller}: at most ${verdict.max} per ${settings.rateLimitWindowMs / 1000} seconds; retry in ${resetSeconds} seconds`;
    reply
      .status(429)
      .header('retry-after', resetSeconds)
      .send(envelope(429, [message]));
    return true;
  };
  // An unlimited budget (the global key's by default) is not metered at all: the meter would answer "allowed" after
  // a few promises, which showed in profiles of sends at 2,000/s.
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    if (isPublicRoute(request) || budgets[kindOf(callerKey(request))] === 0) return done();
    // Answered 429: the hook ends without calling done (Fastify's callback hooks answer early that way).
    limitRequest(request, reply).then((answered) => {
      if (!answered) done();
    }, done);
  });
}
