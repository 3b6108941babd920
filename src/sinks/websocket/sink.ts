// The websocket sink: marks the events an instance's websocket settings want, and hands every committed event of the
// store (whichever node wrote it) to the socket.io servers attached to it, read from the outbox in order.
import type { EventName } from '../../core/event-catalog.js';
import type { EventEnvelope } from '../../core/event-envelope.js';
import type { SinkConfig } from '../../core/event-sink.js';
import type { OutboxRow } from '../../events/outbox-feed.js';
import type { OutboxCommits } from '../../events/outbox-signal.js';
import { sinkWants, type SinkConfigs } from '../../events/sink-configs.js';
import type { OutboxSink } from '../../events/writer.js';
import type { Logger } from '../../platform/logger.js';
import type { Db, Dialect } from '../../platform/store/db.js';
import { parseSinkSettings, singleFieldCreation } from '../sink-settings.js';
import type { FanOut } from './fan-out.js';
import { websocketMark } from './mark.js';
import { OutboxTail } from './outbox-tail.js';
import { websocketRoutes } from './routes.js';

export interface WebsocketSinkOptions {
  settings: Pick<SinkConfigs, 'get'>;
  store: { db: Db; dialect: Dialect };
  logger: Logger;
  /** Wake-ups when any node commits events (without them events are found at the next poll). */
  commits?: OutboxCommits;
  /** Safety poll of the outbox (default 500 ms). */
  pollMs?: number;
}

export class WebsocketSink implements OutboxSink {
  readonly kind = 'websocket';
  readonly outboxMark = websocketMark;
  readonly routes;
  readonly creation = singleFieldCreation('websocket', (input, field) => parseSinkSettings(input, field));
  private readonly fanOuts = new Set<FanOut>();
  private readonly tail: OutboxTail;
  private started = false;
  private reading: Promise<void> | undefined;
  private unlisten: (() => void) | undefined;
  private readonly logger: Logger;

  constructor(private readonly options: WebsocketSinkOptions) {
    this.routes = websocketRoutes(options.settings);
    const logger = options.logger.child({ component: 'websocket' });
    this.logger = logger;
    this.tail = new OutboxTail({
      db: options.store.db,
      dialect: options.store.dialect,
      logger,
      pollMs: options.pollMs,
      deliver: (row) => this.deliver(row, logger),
    });
  }

  wants(settings: SinkConfig | undefined, event: EventName): boolean {
    return sinkWants(settings, event);
  }

  /**
   * Fans out each event committed from now on (a socket.io server attached to the HTTP server); answers how to stop.
   * The outbox is read only while a server follows (from the service's start, or from the first follow after it).
   */
  follow(fanOut: FanOut): () => void {
    this.fanOuts.add(fanOut);
    if (this.started) void this.read();
    return () => this.fanOuts.delete(fanOut);
  }

  /** Nothing is kept beside the mark: after the commit, this node's reader looks at the outbox at once. */
  write(): (() => void) | undefined {
    return this.reading ? () => this.tail.wake() : undefined;
  }

  async start(): Promise<void> {
    this.started = true;
    if (this.fanOuts.size > 0) await this.read();
  }

  async stop(): Promise<void> {
    this.started = false;
    this.unlisten?.();
    this.unlisten = undefined;
    await this.reading;
    this.reading = undefined;
    await this.tail.stop();
  }

  /** Starts reading the outbox (once). */
  private read(): Promise<void> {
    this.reading ??= this.tail.start().then(
      () => {
        this.unlisten ??= this.options.commits?.onCommitted(() => this.tail.wake());
      },
      (error: unknown) => {
        // Tried again at the next follow or start.
        this.reading = undefined;
        this.logger.error({ err: error }, 'websocket delivery could not start reading the outbox');
      },
    );
    return this.reading;
  }

  private deliver(row: OutboxRow, logger: Logger): void {
    if (this.fanOuts.size === 0) return;
    let envelope: EventEnvelope;
    try {
      envelope = JSON.parse(row.body) as EventEnvelope;
    } catch (error) {
      logger.warn({ instance: row.instanceName, eventId: row.id, err: error }, 'an outbox event could not be read; not sent to websocket clients');
      return;
    }
    const event = row.event as EventName;
    // What the instance's settings wanted when the event was written (stored with it); live settings for older rows.
    const wanted =
      row.brokerWants !== null
        ? (row.brokerWants & websocketMark) !== 0
        : row.instanceId !== null && sinkWants(this.options.settings.get(row.instanceId, 'websocket'), event);
    for (const fanOut of this.fanOuts) fanOut(envelope, row.instanceId, event, wanted);
  }
}
