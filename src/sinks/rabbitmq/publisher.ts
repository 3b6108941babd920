// Publishes to RabbitMQ on a confirm channel: persistent messages, one confirm awaited per message, reconnects on demand.
import { connect, type ChannelModel, type ConfirmChannel } from 'amqplib';
import type { Logger } from '../../platform/logger.js';
import { LinkSlot, within, type BrokerPublisher, type Publication, type Sent } from '../broker-relay/publisher.js';
import { RabbitTopology, type TopologyOptions } from './topology.js';
import { safeAddress } from '../broker-relay/settings.js';

export interface RabbitmqPublisherOptions extends TopologyOptions {
  uri: string;
  logger: Logger;
  /** Longest wait for the broker's confirm of one message (default 15 s). */
  confirmTimeoutMs?: number;
  /** Longest wait for the connection to open (default 10 s). */
  connectTimeoutMs?: number;
  /** AMQP heartbeat, unless the URI sets one (default 30 s). */
  heartbeatSeconds?: number;
}

interface Link {
  model: ChannelModel;
  channel: ConfirmChannel;
  topology: RabbitTopology;
  /** Set while the socket buffer is full: resolves on `drain` (or when the channel goes). */
  drained?: Promise<void>;
  lost: boolean;
}

export class RabbitmqPublisher implements BrokerPublisher {
  private readonly link = new LinkSlot<Link>(() => this.open());
  private readonly confirmTimeoutMs: number;

  constructor(private readonly options: RabbitmqPublisherOptions) {
    this.confirmTimeoutMs = options.confirmTimeoutMs ?? 15_000;
  }

  async send(publication: Publication): Promise<Sent> {
    const link = await this.link.get();
    await link.topology.prepare(publication);
    if (link.drained) await link.drained;
    if (link.lost) throw new Error('RabbitMQ connection lost');
    const confirmed = new Promise<void>((resolve, reject) => {
      const accepted = link.channel.publish(
        publication.target,
        publication.routingKey,
        publication.body,
        {
          persistent: true,
          contentType: 'application/json',
          contentEncoding: 'utf-8',
          messageId: publication.messageId,
          type: publication.event,
          appId: 'switchboard',
          timestamp: Math.floor(Date.now() / 1000),
        },
        (error: unknown) => (error ? reject(new Error(`RabbitMQ did not confirm: ${describe(error)}`)) : resolve()),
      );
      if (!accepted && !link.drained) {
        link.drained = new Promise<void>((done) => {
          const release = () => {
            link.drained = undefined;
            done();
          };
          link.channel.once('drain', release);
          link.channel.once('close', release);
        });
      }
    });
    return { confirmed: within(confirmed, this.confirmTimeoutMs, 'RabbitMQ confirm') };
  }

  async reset(): Promise<void> {
    const link = this.link.release();
    if (!link) return;
    const open = await link.catch(() => undefined);
    if (open) {
      open.lost = true;
      await open.model.close().catch(() => undefined);
    }
  }

  private async open(): Promise<Link> {
    const { logger } = this.options;
    const model = await connect(withHeartbeat(this.options.uri, this.options.heartbeatSeconds ?? 30), {
      timeout: this.options.connectTimeoutMs ?? 10_000,
      clientProperties: { connection_name: 'switchboard events' },
    });
    let link: Link | undefined;
    const lose = (why: string) => {
      if (!link || link.lost) return;
      link.lost = true;
      if (this.link.current) logger.warn({ reason: why }, 'RabbitMQ connection lost; will reconnect');
      // Only forget the link if it is still the current one (a newer connection may exist already).
      void this.link.current?.then(
        (current) => {
          if (current === link) this.link.current = undefined;
        },
        () => undefined,
      );
    };
    model.on('error', (error: Error) => lose(error.message));
    model.on('close', () => lose('connection closed'));
    model.on('blocked', (reason: string) => logger.warn({ reason }, 'RabbitMQ blocks publishing (resource alarm)'));
    model.on('unblocked', () => logger.info('RabbitMQ publishing unblocked'));
    try {
      const channel = await model.createConfirmChannel();
      channel.on('error', (error: Error) => lose(`channel error: ${error.message}`));
      // The publishing channel closing (e.g. an exchange deleted under it) means a fresh connection.
      channel.on('close', () => {
        lose('channel closed');
        void model.close().catch(() => undefined);
      });
      link = { model, channel, topology: new RabbitTopology(model, this.options), lost: false };
      logger.info({ broker: safeAddress(this.options.uri) }, 'RabbitMQ connected');
      return link;
    } catch (error) {
      await model.close().catch(() => undefined);
      throw error;
    }
  }
}

/** Adds `heartbeat=<s>` to an AMQP URI that does not set it, so a dead peer is noticed. */
export function withHeartbeat(uri: string, seconds: number): string {
  try {
    const url = new URL(uri);
    if (url.searchParams.has('heartbeat')) return uri;
    url.searchParams.set('heartbeat', String(seconds));
    return url.toString();
  } catch {
    return uri;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
