// Renders every failure in Evolution's error envelope; unexpected errors are logged and answered 500 without details.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CodedError } from '../../core/errors.js';
import { TransientConnectorError } from '../../core/connector.js';
import { envelope, statusOf } from './error-envelope.js';
import { describeValidationError } from './validation-messages.js';
import { requestIdHeader } from './request-id.js';

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | CodedError, request, reply) => {
    if (error instanceof CodedError) {
      const status = statusOf(error);
      return reply.status(status).send(envelope(status, error.messages));
    }
    // The messenger's provider failing for now (rate limit, outage, timeout) on an operation done while the caller
    // waits (sends are queued and retried instead): the caller may try again.
    if (error instanceof TransientConnectorError) {
      return reply.status(503).send(envelope(503, [`the messenger did not take it for now (${error.message}); try again shortly`]));
    }
    if (error.validation) {
      const context = error.validationContext ?? 'body';
      const messages = [...new Set(error.validation.map((e) => describeValidationError(e, context)))];
      return reply.status(400).send(envelope(400, messages));
    }
    // PostgreSQL keeps no NUL in text (SQLite does): a value that reached the store with one is the caller's to fix.
    if ((error as { code?: unknown }).code === '22021') {
      return reply.status(400).send(envelope(400, ['a text value holds a NUL character (\\u0000), which cannot be stored; remove it']));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const message =
        error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
          ? `Content-Type ${request.headers['content-type'] ?? '(none)'} is not supported; send application/json`
          : error.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
            ? 'request body is larger than the limit'
            : error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
              ? 'body must not be empty when Content-Type is application/json'
              : error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError
                ? `body is not valid JSON: ${error.message}`
                : error.message;
      return reply.status(status).send(envelope(status, [message]));
    }
    request.log.error({ err: error }, 'unexpected error');
    return reply.status(500).send(envelope(500, ['An unexpected error occurred; it has been logged']));
  });

  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send(envelope(404, [`Cannot ${request.method} ${request.url.split('?')[0]}`]));
  });
}

/**
 * Failures of the router itself (Fastify's `frameworkErrors`): a path that is not valid percent-encoding, or a path
 * parameter past the router's length limit, answered in the same envelope as every other error.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const message =
    error.code === 'FST_ERR_BAD_URL'
      ? 'the URL path is not valid: a "%" must start an escape such as %20'
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? 'a path parameter is too long: instance names are 1 to 64 characters'
        : error.message;
  // Sent before any hook runs, so the request id header is set here.
  void reply
    .status(400)
    .header(requestIdHeader, request.id)
    .send(envelope(400, [message]));
}

/**
 * Requests Node's HTTP parser refuses before any route sees them (headers too large, a malformed request line, a
 * client too slow to send its request), answered in the same envelope as every other error, then the connection
 * closed as Node does.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'the request was not received in time']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'the request headers are too large (16 KB in all at most); shorten them, e.g. the Idempotency-Key (255 characters at most)']
        : [400, 'the request is not valid HTTP'];
  const body = JSON.stringify(envelope(status, [message]));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
