// Publishes to NATS through JetStream: each message acknowledged by the stream, deduplicated by its Nats-Msg-Id.
import { connect, type ConnectionOptions, type JetStreamClient, type NatsConnection, type NatsError } from 'nats';
import type { Logger } from '../../platform/logger.js';
import { LinkSlot, PublicationRefused, type BrokerPublisher, type Publication, type Sent } from '../broker-relay/publisher.js';
import { StreamSubjects, validSubject } from './stream.js';
import { safeAddress } from '../broker-relay/settings.js';

export interface NatsPublisherOptions {
  url: string;
  stream: string;
  streamMaxAgeMs: number;
  /** Stream pattern to add for a publication's subject (`<instance>.>`, `<prefix>.>`). */
  patternOf(publication: Publication): string;
  logger: Logger;
  /** Longest wait for the stream's acknowledgement (default 10 s). */
  ackTimeoutMs?: number;
  /** Longest wait for the connection to open (default 10 s). */
  connectTimeoutMs?: number;
}

interface Link {
  nc: NatsConnection;
  js: JetStreamClient;
  subjects: StreamSubjects;
}

export class NatsPublisher implements BrokerPublisher {
  private readonly link = new LinkSlot<Link>(() => this.open());
  private readonly ackTimeoutMs: number;

  constructor(private readonly options: NatsPublisherOptions) {
    this.ackTimeoutMs = options.ackTimeoutMs ?? 10_000;
  }

  async send(publication: Publication): Promise<Sent> {
    if (!validSubject(publication.target)) {
      throw new PublicationRefused(`"${publication.target}" is not a valid NATS subject`, true);
    }
    const link = await this.link.get();
    await link.subjects.ensure(publication.target, this.options.patternOf(publication));
    // The message leaves in call order (JetStream's publish writes before its first await).
    const ack = link.js.publish(publication.target, publication.body, { msgID: publication.messageId, timeout: this.ackTimeoutMs });
    const confirmed = ack.then(
      () => undefined,
      (error: unknown) => {
        // 503: no stream took the subject (the stream was changed or deleted meanwhile).
        if ((error as Partial<NatsError>).code === '503') link.subjects.invalidate();
        throw new Error(`JetStream did not acknowledge: ${(error as Error).message}`);
      },
    );
    return { confirmed };
  }

  async reset(): Promise<void> {
    const open = await this.link.release()?.catch(() => undefined);
    if (open && !open.nc.isClosed()) await open.nc.close().catch(() => undefined);
  }

  private async open(): Promise<Link> {
    const { logger } = this.options;
    const nc = await connect({
      ...serversAndCredentials(this.options.url),
      name: 'switchboard events',
      timeout: this.options.connectTimeoutMs ?? 10_000,
      // The client reconnects by itself for as long as it takes; unacknowledged messages are sent again by the relay.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
    });
    const current = this.link.current;
    void nc.closed().then(() => {
      if (this.link.current === current) this.link.current = undefined;
    });
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === 'disconnect') logger.warn('NATS disconnected; reconnecting');
        else if (status.type === 'reconnect') logger.info('NATS reconnected');
      }
    })().catch(() => undefined);
    try {
      const jsm = await nc.jetstreamManager({ timeout: this.ackTimeoutMs });
      const subjects = new StreamSubjects(jsm, { name: this.options.stream, maxAgeMs: this.options.streamMaxAgeMs, logger });
      logger.info({ broker: safeAddress(this.options.url), stream: this.options.stream }, 'NATS connected');
      return { nc, js: nc.jetstream({ timeout: this.ackTimeoutMs }), subjects };
    } catch (error) {
      await nc.close().catch(() => undefined);
      throw error;
    }
  }
}

/**
 * Server list and credentials from NATS_URL: the client does not read `user:pass@` (or `token@`) from a URL,
 * so they are taken out and passed as options (the first server that carries them wins).
 */
export function serversAndCredentials(url: string): Pick<ConnectionOptions, 'servers' | 'user' | 'pass' | 'token'> {
  const servers: string[] = [];
  const credentials: Pick<ConnectionOptions, 'user' | 'pass' | 'token'> = {};
  for (const raw of url
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    let parsed: URL;
    try {
      parsed = new URL(raw.includes('://') ? raw : `nats://${raw}`);
    } catch {
      servers.push(raw);
      continue;
    }
    if (parsed.username && credentials.user === undefined && credentials.token === undefined) {
      const user = decodeURIComponent(parsed.username);
      if (parsed.password) {
        credentials.user = user;
        credentials.pass = decodeURIComponent(parsed.password);
      } else {
        credentials.token = user;
      }
    }
    servers.push(`${parsed.protocol}//${parsed.host}`);
  }
  return { servers, ...credentials };
}
