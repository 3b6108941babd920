// The send pipeline behind every send route: idempotency, content building, the stored PENDING record.
import { createHash } from 'node:crypto';
import { timeOrderedId } from '../platform/util/time-ordered-id.js';
import type { Db } from '../platform/store/db.js';
import type { Instance } from '../core/instance.js';
import { invalidInput, conflict } from '../core/errors.js';
import { newMessageId, sourceOfId } from './ids.js';
import { errorDetailOf, findByIdempotencyKey, presentMessage, type MessageRecord } from './records.js';
import type { SendQueue } from './send-queue.js';
import type { SendOutcomes } from './send-outcomes.js';

export interface BuiltMessage {
  remoteJid: string;
  /** The recipient's other address (@lid or phone), when the connector knows it. */
  remoteJidAlt?: string;
  messageType: string;
  content: Record<string, unknown>;
  statusJidList?: string[];
  participant?: string | null;
  /** Plaintext media to keep for a connector that uploads at send time. */
  mediaBlob?: Buffer;
}

export interface SubmitOptions {
  /** Route name and body: what makes two requests "the same" for an Idempotency-Key. */
  route: string;
  body: unknown;
  idempotencyKey?: string;
  delay?: number;
  mentionsEveryOne?: boolean;
  /** Wait for the first delivery attempt (connectors that know the outcome at once) and answer its refusal. */
  awaitFirstAttempt?: boolean;
}

const idempotencyWindowMs = 24 * 3600_000;
/** How long a request waits for a synchronous connector's first attempt before answering 201 PENDING. */
const firstAttemptWaitMs = 30_000;

export class SendService {
  constructor(
    private readonly db: Db,
    private readonly queue: SendQueue,
    private readonly outcomes: SendOutcomes,
  ) {}

  /** Stores the send as PENDING (delivered later by the worker); a repeated Idempotency-Key answers the first record. */
  async submit(instance: Instance, options: SubmitOptions, build: () => Promise<BuiltMessage>) {
    const requestHash = options.idempotencyKey ? hashRequest(options.route, options.body) : undefined;
    if (options.idempotencyKey && requestHash !== undefined) {
      const replay = await this.replay(instance, options.idempotencyKey, requestHash, options.awaitFirstAttempt === true);
      if (replay) return { message: replay, replayed: true };
    }
    const built = await build();
    const keyId = newMessageId();
    const record: MessageRecord = {
      id: timeOrderedId(),
      instanceId: instance.id,
      keyId,
      remoteJid: built.remoteJid,
      remoteJidAlt: built.remoteJidAlt ?? null,
      fromMe: true,
      participant: built.participant ?? null,
      pushName: instance.profileName,
      messageType: built.messageType,
      content: built.content,
      status: 'PENDING',
      timestamp: Math.floor(Date.now() / 1000),
      source: sourceOfId(keyId),
    };
    const mediaBlobId = built.mediaBlob ? timeOrderedId() : undefined;
    const firstAttempt = options.awaitFirstAttempt ? this.outcomes.wait(record.id, firstAttemptWaitMs) : undefined;
    try {
      await this.queue.accept({
        record,
        idempotencyKey: options.idempotencyKey,
        requestHash,
        mediaBlob: built.mediaBlob,
        payload: {
          outbound: {
            keyId,
            remoteJid: built.remoteJid,
            messageType: built.messageType,
            ...(built.statusJidList ? { statusJidList: built.statusJidList } : {}),
            ...(mediaBlobId ? { mediaBlobId } : {}),
            ...(options.mentionsEveryOne ? { mentionsEveryOne: true } : {}),
          },
          delay: options.delay ?? 0,
        },
      });
    } catch (error) {
      // Two requests with the same key at once: the loser answers what the winner stored.
      if (options.idempotencyKey && requestHash !== undefined) {
        const replay = await this.replay(instance, options.idempotencyKey, requestHash, options.awaitFirstAttempt === true);
        if (replay) return { message: replay, replayed: true };
      }
      throw error;
    }
    if (firstAttempt) {
      const outcome = await firstAttempt;
      if (outcome.kind === 'refused') throw outcome.error;
    }
    return { message: presentMessage(record), replayed: false };
  }

  /**
   * The answer to a repeated Idempotency-Key. `refusalsAnswered`: the instance's connector answers a send's refusal
   * (it knows the outcome at once), so a send that ended ERROR is answered with its error again, not a 201.
   */
  private async replay(instance: Instance, key: string, requestHash: string, refusalsAnswered: boolean) {
    const existing = await findByIdempotencyKey(this.db, instance.id, key);
    if (!existing) return undefined;
    if (existing.createdAt < Date.now() - idempotencyWindowMs) {
      // Past the 24 h window the key is free again.
      await this.db.updateTable('messages').set({ idempotency_key: null }).where('id', '=', existing.record.id).execute();
      return undefined;
    }
    if (existing.requestHash !== requestHash) {
      throw conflict(`Idempotency-Key "${readableHeader(key)}" was already used with a different request; use a new key for a new send`);
    }
    if (refusalsAnswered && existing.record.status === 'ERROR') {
      const reason = await errorDetailOf(this.db, instance.id, existing.record.id);
      throw invalidInput(reason ?? 'this send was refused', `(the answer to the first request with Idempotency-Key "${readableHeader(key)}")`);
    }
    const present = presentMessage(existing.record);
    // The answer replays the acknowledgement as first given.
    return { ...present, status: 'PENDING' };
  }
}

/** A header value as the client wrote it: Node reads header bytes as Latin-1, so UTF-8 text shows as mojibake. */
function readableHeader(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the Latin-1 range starts at U+0000 on purpose
  if (!/[\u0080-\u00ff]/.test(value) || /[^\u0000-\u00ff]/.test(value)) return value;
  const decoded = Buffer.from(value, 'latin1').toString('utf8');
  return decoded.includes('\ufffd') ? value : decoded;
}

function hashRequest(route: string, body: unknown): string {
  return createHash('sha256')
    .update(route)
    .update('\0')
    .update(canonicalJson(body ?? null))
    .digest('hex');
}

/** JSON with object keys sorted, so the same body in another key order counts as the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
