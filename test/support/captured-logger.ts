// A service logger whose JSON lines a test reads back: parsed in `lines`, as written in `raw`.
import { Writable } from 'node:stream';
import { createLogger } from '../../src/platform/logger.js';
import type { LogLevel } from '../../src/platform/config.js';

/** A logger at `level` whose lines are kept, parsed, in `lines`. */
export function capturedLogger(level: LogLevel) {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { logger: createLogger(level, destination), lines, raw };
}
