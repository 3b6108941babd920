// A broker sink (RabbitMQ, NATS): marks the outbox events an instance's settings want, and its relay, when the broker
// is enabled, publishes them from the outbox (woken after each commit).
import { invalidInput } from '../../core/errors.js';
import type { EventName } from '../../core/event-catalog.js';
import type { SinkConfig, SinkKind } from '../../core/event-sink.js';
import { sinkWants, type SinkConfigs } from '../../events/sink-configs.js';
import type { OutboxCommits } from '../../events/outbox-signal.js';
import type { OutboxSink } from '../../events/writer.js';
import { parseSinkSettings, singleFieldCreation, type BasicSinkInput } from '../sink-settings.js';
import type { OutboxRelay } from './relay.js';
import { brokerRoutes } from './routes.js';

export interface BrokerSinkOptions {
  kind: SinkKind;
  /** Its bit of the outbox's `broker_wants`. */
  outboxMark: number;
  label: string;
  where: string;
  settings: Pick<SinkConfigs, 'get'>;
  /** Why an instance of this name cannot publish on the broker (its name is the exchange or subject), if it cannot. */
  nameProblem(instanceName: string): string | undefined;
  /** The relay publishing the marked events; absent when the broker is not enabled (events are still marked). */
  relay?: OutboxRelay;
  /** Wake-ups when any node commits events. */
  commits?: OutboxCommits;
}

export class BrokerSink implements OutboxSink {
  readonly kind: SinkKind;
  readonly outboxMark: number;
  readonly relay?: OutboxRelay;
  readonly routes;
  readonly creation;
  private unlisten: (() => void) | undefined;

  constructor(private readonly options: BrokerSinkOptions) {
    this.kind = options.kind;
    this.outboxMark = options.outboxMark;
    this.relay = options.relay;
    const parse = (input: BasicSinkInput, field: string, instanceName: string) => this.parse(input, field, instanceName);
    this.routes = brokerRoutes({ kind: options.kind, label: options.label, where: options.where, settings: options.settings, parse });
    this.creation = singleFieldCreation(options.kind, parse);
  }

  wants(settings: SinkConfig | undefined, event: EventName): boolean {
    return sinkWants(settings, event);
  }

  /** Nothing to write beside the mark: the relay reads the outbox itself, woken after the commit. */
  write(): (() => void) | undefined {
    const relay = this.relay;
    return relay ? () => relay.wake() : undefined;
  }

  /** Creates the cursor when missing and starts relaying (the broker may be down: the relay waits for it). */
  async start(): Promise<void> {
    const relay = this.relay;
    if (!relay) return;
    await relay.start();
    this.unlisten ??= this.options.commits?.onCommitted(() => relay.wake());
  }

  /** Stops relaying; events not yet confirmed stay in the outbox for the next start. */
  async stop(): Promise<void> {
    this.unlisten?.();
    this.unlisten = undefined;
    await this.relay?.stop();
  }

  /** Checks settings for the instance (found at `field`) and returns what is stored. */
  private parse(input: BasicSinkInput, field: string, instanceName: string): SinkConfig {
    if (input.enabled ?? true) {
      const problem = this.options.nameProblem(instanceName);
      if (problem) throw invalidInput(problem);
    }
    return parseSinkSettings(input, field);
  }
}
