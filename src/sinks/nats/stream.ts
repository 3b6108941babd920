// Keeps the JetStream stream covering every subject the relay publishes on, adding subjects as instances appear.
import { nanos, RetentionPolicy, StorageType, type JetStreamManager, type NatsError } from 'nats';
import type { Logger } from '../../platform/logger.js';
import { PublicationRefused } from '../broker-relay/publisher.js';

export interface StreamOptions {
  name: string;
  /** Age limit for a stream created here (0 = none); an existing stream's limits are left alone. */
  maxAgeMs: number;
  logger: Logger;
}

/** JetStream error codes met here. */
const streamNotFound = 10059;
const streamNameInUse = 10058;
const overlapsAnotherStream = 10065;

export class StreamSubjects {
  /** The stream's subjects as last read or written. */
  private subjects: string[] | undefined;
  /** Subjects another stream takes (we could not add them to ours). */
  private readonly elsewhere = new Set<string>();

  constructor(
    private readonly jsm: JetStreamManager,
    private readonly options: StreamOptions,
  ) {}

  /** Makes sure a publication on `subject` is stored, adding `pattern` (or just the subject) to the stream when needed. */
  async ensure(subject: string, pattern: string): Promise<void> {
    if (this.elsewhere.has(subject) || (this.subjects && coveredBy(this.subjects, subject))) return;
    this.subjects = await this.read(pattern);
    if (coveredBy(this.subjects, subject)) return;
    for (const wanted of pattern === subject ? [subject] : [pattern, subject]) {
      try {
        this.subjects = await this.add(this.subjects, wanted);
        this.options.logger.info({ stream: this.options.name, subject: wanted }, 'NATS stream subject added');
        return;
      } catch (error) {
        const code = apiCode(error);
        if (code === overlapsAnotherStream) continue;
        // The server answered and said no: this subject cannot be added (the connection itself is fine).
        if (code !== undefined) {
          throw new PublicationRefused(`stream ${this.options.name} refuses subject ${wanted}: ${(error as Error).message}`, true, code);
        }
        throw error;
      }
    }
    // Another stream covers part of this space; if it takes this subject the publish is acknowledged by it.
    this.elsewhere.add(subject);
    this.options.logger.warn({ stream: this.options.name, subject }, 'NATS subject overlaps another stream; publishing there');
  }

  /** Forget what is known (a publish found no stream: someone changed or deleted it). */
  invalidate(): void {
    this.subjects = undefined;
    this.elsewhere.clear();
  }

  private async read(firstSubject: string): Promise<string[]> {
    try {
      return (await this.jsm.streams.info(this.options.name)).config.subjects ?? [];
    } catch (error) {
      if (apiCode(error) !== streamNotFound) throw error;
    }
    try {
      const created = await this.jsm.streams.add({
        name: this.options.name,
        subjects: [firstSubject],
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        max_age: this.options.maxAgeMs > 0 ? nanos(this.options.maxAgeMs) : 0,
        duplicate_window: nanos(120_000),
      });
      this.options.logger.info({ stream: this.options.name }, 'NATS stream created');
      return created.config.subjects ?? [];
    } catch (error) {
      // Another node created it at the same moment.
      if (apiCode(error) !== streamNameInUse) throw error;
      return (await this.jsm.streams.info(this.options.name)).config.subjects ?? [];
    }
  }

  private async add(current: string[], wanted: string): Promise<string[]> {
    // A stream refuses overlapping subjects of its own: the new pattern replaces those it covers.
    const next = [...current.filter((s) => !covers(wanted, s)), wanted];
    const updated = await this.jsm.streams.update(this.options.name, { subjects: next });
    return updated.config.subjects ?? next;
  }
}

/** True when `subject` (a concrete subject or a pattern) is matched by `pattern` (`*` one token, `>` the rest). */
export function covers(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== '*' && p[i] !== s[i]) return false;
    if (p[i] === '*' && s[i] === '>') return false;
  }
  return p.length === s.length;
}

function coveredBy(patterns: string[], subject: string): boolean {
  return patterns.some((p) => covers(p, subject));
}

/** A concrete NATS subject: non-empty tokens, no wildcards or white space. */
export function validSubject(subject: string): boolean {
  return subject.split('.').every((token) => token.length > 0 && !/[\s*>]/.test(token));
}

function apiCode(error: unknown): number | undefined {
  return (error as Partial<NatsError> | undefined)?.api_error?.err_code;
}
