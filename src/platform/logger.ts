// Structured logging (pino): one root logger, children carry the instance name, lines written while a request is
// answered carry its id (reqId); secrets are redacted.
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config.js';
import { currentRequestId } from './request-context.js';

export type { Logger };

/** Set on Fastify's own request loggers: their lines carry reqId as a binding already (children inherit the mark). */
const bindsRequestId = Symbol('bindsRequestId');

/** Marks a logger whose bindings hold the request's id, so the mixin does not write it a second time. */
export function markRequestLogger(logger: object): void {
  (logger as { [bindsRequestId]?: true })[bindsRequestId] = true;
}

/** What the mixin answers when there is nothing to add: the merge then keeps the line's own object as it is. */
const nothing: Record<string, never> = Object.freeze({});

/** pino calls this for every line written: kept to a property read and a context lookup. */
function requestIdOfLine(_line: object, _level: number, logger: object): object {
  if ((logger as { [bindsRequestId]?: true })[bindsRequestId] === true) return nothing;
  const reqId = currentRequestId();
  return reqId === undefined ? nothing : { reqId };
}

/** The line's own fields win (a line that names a reqId keeps it); nothing to add costs no copy. */
function withRequestId(line: object, added: object): object {
  return added === nothing ? line : Object.assign(added, line);
}

/** The service's logger; lines go to stdout unless a `destination` is given (tests read them). */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'switchboard' },
    redact: {
      paths: ['apikey', 'headers.apikey', 'req.headers.apikey', '*.apikey', 'token', '*.token', 'secret', '*.secret'],
      censor: '[redacted]',
    },
    mixin: requestIdOfLine,
    mixinMergeStrategy: withRequestId,
  };
  return destination ? pino(options, destination) : pino(options);
}

/** A logger that writes nothing, for tests and tools. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
