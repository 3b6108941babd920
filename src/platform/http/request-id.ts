// Every request's id: the client's `x-request-id` when it is a sane value, else a new one; on its log lines and its answer.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

export const requestIdHeader = 'x-request-id';

/** 1 to 128 visible ASCII characters: safe to log and to echo in a header. */
const saneRequestId = /^[\x21-\x7e]{1,128}$/;

/** Fastify's `genReqId`: the client's id when sane (a proxy's or the caller's own, to follow one request end to end), else a UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers[requestIdHeader];
  return typeof given === 'string' && saneRequestId.test(given) ? given : randomUUID();
}

/** Puts the request's id on every answer, errors included (onSend runs for every reply Fastify sends). */
export function registerRequestIdHeader(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header(requestIdHeader, request.id);
    done(null, payload);
  });
}
