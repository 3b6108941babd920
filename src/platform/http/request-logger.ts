// Request loggers made on first use: Fastify gives every request a child logger, and most requests never log.
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';
import { markRequestLogger } from '../logger.js';

type LogMethod = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
/** A log method with its overloads set aside: the call is handed on to the real child as it came. */
type AnyLogCall = (...args: unknown[]) => void;

/**
 * Stands for `parent.child(bindings, options)` and creates it the first time it is used. A pino child costs about
 * 2.5 µs (measured on the send path, where nothing logs unless something fails).
 */
class LazyRequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private logger(): FastifyBaseLogger {
    if (this.made === undefined) {
      this.made = this.parent.child(this.bindings, this.options);
      // Its bindings hold reqId: the logger's mixin (which adds the id to service lines) leaves its lines alone.
      markRequestLogger(this.made);
    }
    return this.made;
  }

  private call(method: LogMethod, args: unknown[]): void {
    const logger = this.logger();
    (logger[method] as AnyLogCall).apply(logger, args);
  }

  get level(): string {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger().level = level;
  }

  // Methods on the prototype, not per-instance arrow functions: one object per request is the whole cost.
  fatal(...args: unknown[]): void {
    this.call('fatal', args);
  }
  error(...args: unknown[]): void {
    this.call('error', args);
  }
  warn(...args: unknown[]): void {
    this.call('warn', args);
  }
  info(...args: unknown[]): void {
    this.call('info', args);
  }
  debug(...args: unknown[]): void {
    this.call('debug', args);
  }
  trace(...args: unknown[]): void {
    this.call('trace', args);
  }
  /** Writes nothing, as pino's own `silent` (no child is made for it). */
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger().child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: each request's logger (with its `reqId`) is created when it first logs. */
export const lazyRequestLoggers: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  new LazyRequestLogger(logger, bindings, options);
