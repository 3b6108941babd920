// Every request's id: the client's `x-request-id` when it is a sane value, else a new one; on its answer and on every
// line logged while it is answered (Fastify's own lines and the services').
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { closeRequestContext, runInRequestContext, type RequestContext } from '../request-context.js';

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

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's log context (see registerRequestContext); null until its first hook ran. */
    logContext: RequestContext | null;
  }
}

/**
 * Answers every request inside a context naming its id, so that lines the services log while answering carry
 * `reqId` (the logger's mixin reads it). Register before any other onRequest hook. The context is closed once the
 * answer is sent or the client went away: later lines of work the request started carry no id.
 */
export function registerRequestContext(app: FastifyInstance): void {
  app.decorateRequest('logContext', null);
  app.addHook('onRequest', (request, _reply, done) => {
    request.logContext = runInRequestContext(request.id, done);
  });
  const close: (request: { logContext: RequestContext | null }) => void = (request) => {
    if (request.logContext) closeRequestContext(request.logContext);
  };
  app.addHook('onResponse', (request, _reply, done) => {
    close(request);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    close(request);
    done();
  });
}
