// Structured logging (pino): one root logger, children carry the instance name; secrets are redacted.
import { pino, type Logger } from 'pino';
import type { LogLevel } from './config.js';

export type { Logger };

export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
    base: { service: 'switchboard' },
    redact: {
      paths: ['apikey', 'headers.apikey', 'req.headers.apikey', '*.apikey', 'token', '*.token', 'secret', '*.secret'],
      censor: '[redacted]',
    },
  });
}

/** A logger that writes nothing, for tests and tools. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
