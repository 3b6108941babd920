// Documents each route's error answers (the error envelope) and its authentication in the OpenAPI document.
import type { FastifyInstance, RouteOptions } from 'fastify';
import { ErrorEnvelope } from './schemas.js';

const answer = (description: string) => ({ ...ErrorEnvelope, description });

/**
 * Adds to every documented /messenger route the errors it can answer, in the error envelope: 400 (a field and its
 * rule), 401/403 (the key) and 429 (its rate limit) unless the route is public, 404 for routes naming an instance, 413/415 for routes taking
 * a body, 503 for routes served by the node owning the instance (`live`); public routes are marked as needing no key. Must be registered before the routes.
 */
export function documentErrorAnswers(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.url.startsWith('/messenger') || route.url.startsWith('/messenger/docs')) return;
    route.schema ??= {};
    const schema = route.schema as { hide?: boolean; security?: unknown[]; response?: Record<string, unknown>; body?: unknown };
    if (schema.hide) return;
    const { access, live } = (route.config as { access?: string; live?: boolean } | undefined) ?? {};
    const errors: Record<string, unknown> = { 400: answer('The request is invalid: each message names the field and the rule') };
    if (access === 'public') {
      schema.security = [];
    } else {
      errors[401] = answer('No API key, or an unknown one');
      errors[403] = answer('The key does not grant this: an instance key used for another instance, or where the global key is needed');
      errors[429] = answer("Too many requests for this key (or, without a valid key, from this address): retry after the Retry-After header's seconds");
    }
    if (route.url.includes(':instance')) errors[404] = answer('No instance of that name');
    if (live) {
      errors[503] = answer(
        "In a fleet, the node holding the instance's live connection cannot be reached or the instance is moving to another node: retry after the Retry-After header's seconds",
      );
    }
    if (schema.body) {
      errors[413] = answer('The body is larger than the limit (media: MEDIA_MAX_BYTES)');
      errors[415] = answer('The body is not application/json in UTF-8');
    }
    schema.response = { ...errors, ...(schema.response ?? {}) };
  });
}
