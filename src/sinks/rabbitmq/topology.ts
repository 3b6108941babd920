// Declares what a RabbitMQ publication needs, once per connection: the durable topic exchange and Evolution's queues.
import type { Channel, ChannelModel } from 'amqplib';
import { PublicationRefused, type Publication } from '../broker-relay/publisher.js';

export interface TopologyOptions {
  /** Declare and bind `<instance>.<wire event>` / `[<prefix>.]<wire event>` queues (as Evolution does). */
  declareQueues: boolean;
  /** Prefix of the global queue names ('' = none). */
  globalQueuePrefix: string;
}

/** AMQP reply codes that mean the broker will refuse the same declaration again. */
const refusedForGood = new Set([403, 405, 406]);

export class RabbitTopology {
  private readonly declared = new Set<string>();
  /** Declarations run on their own channel: a refused one closes it without touching the publishing channel. */
  private channel: Promise<Channel> | undefined;

  constructor(
    private readonly model: ChannelModel,
    private readonly options: TopologyOptions,
  ) {}

  async prepare(publication: Publication): Promise<void> {
    await this.once(`x:${publication.target}`, (ch) => ch.assertExchange(publication.target, 'topic', { durable: true, autoDelete: false }));
    if (!this.options.declareQueues) return;
    const queue = queueName(publication, this.options.globalQueuePrefix);
    await this.once(`q:${queue}`, async () => {
      try {
        await this.use((ch) => ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
      } catch (error) {
        // The queue exists with other arguments (a consumer declared it first): use it as it is.
        if (!(error instanceof PublicationRefused) || error.code !== 406) throw error;
      }
    });
    await this.once(`b:${queue}|${publication.target}|${publication.routingKey}`, (ch) => ch.bindQueue(queue, publication.target, publication.routingKey));
  }

  private async once(key: string, declare: (channel: Channel) => Promise<unknown>): Promise<void> {
    if (this.declared.has(key)) return;
    await this.use(declare);
    this.declared.add(key);
  }

  private async use(declare: (channel: Channel) => Promise<unknown>): Promise<void> {
    this.channel ??= this.open();
    const channel = await this.channel;
    try {
      await declare(channel);
    } catch (error) {
      const code = codeOf(error);
      if (code === undefined) throw error;
      // The broker closed the channel over this declaration; the next one opens a new channel.
      this.channel = undefined;
      throw new PublicationRefused(`declaration refused (${code}): ${(error as Error).message}`, refusedForGood.has(code), code);
    }
  }

  private open(): Promise<Channel> {
    const opening: Promise<Channel> = this.model.createChannel().then((channel) => {
      // Errors arrive as rejected declarations (and on the connection when it dies); nothing more to do here.
      channel.on('error', () => undefined);
      channel.on('close', () => {
        if (this.channel === opening) this.channel = undefined;
      });
      return channel;
    });
    opening.catch(() => {
      if (this.channel === opening) this.channel = undefined;
    });
    return opening;
  }
}

/** Evolution's queue names: `<instance>.<wire event>` for an instance, `[<prefix>.]<wire event>` for the global exchange. */
function queueName(publication: Publication, globalPrefix: string): string {
  if (publication.scope === 'instance') return `${publication.instance}.${publication.event}`;
  return globalPrefix ? `${globalPrefix}.${publication.event}` : publication.event;
}

/** The AMQP reply code of a channel error raised by the broker (absent for connection failures). */
function codeOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}
