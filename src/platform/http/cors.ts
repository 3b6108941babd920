// CORS for browsers calling the API from the origins of CORS_ORIGIN; requests without an Origin header pass untouched.
import type { FastifyInstance } from 'fastify';
import { originAllowed } from './origin.js';

const allowedMethods = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
const defaultAllowedHeaders = 'apikey, content-type, idempotency-key, x-request-id';
const preflightMaxAgeSeconds = '600';

/**
 * An allowed origin gets `Access-Control-Allow-Origin` (its own origin, with `Vary: Origin`); a preflight (`OPTIONS`
 * with `Access-Control-Request-Method`) is answered 204 here, before authentication, as browsers send it without
 * credentials. A request without `Origin` (servers, CLIs, the hot path) costs one header lookup.
 */
export function registerCors(app: FastifyInstance, setting: string): void {
  app.addHook('onRequest', (request, reply, done) => {
    const origin = request.headers.origin;
    if (origin === undefined || !originAllowed(origin, setting)) return done();
    reply.header('access-control-allow-origin', origin).header('vary', 'Origin').header('access-control-expose-headers', 'Idempotent-Replayed, X-Request-Id');
    if (request.method !== 'OPTIONS' || request.headers['access-control-request-method'] === undefined) return done();
    void reply
      .header('access-control-allow-methods', allowedMethods)
      .header('access-control-allow-headers', request.headers['access-control-request-headers'] ?? defaultAllowedHeaders)
      .header('access-control-max-age', preflightMaxAgeSeconds)
      .header('content-length', '0')
      .code(204)
      .send();
  });
}
