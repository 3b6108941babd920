// Structured logging (pino): one root logger, children carry the instance name; secrets are redacted.
import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config.js';

export type { Logger };

/** The service's logger; lines go to stdout unless a `destination` is given (tests read them). */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'switchboard' },
    redact: {
      paths: ['apikey', 'headers.apikey', 'req.headers.apikey', '*.apikey', 'token', '*.token', 'secret', '*.secret'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** A logger that writes nothing, for tests and tools. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
