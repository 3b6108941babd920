// Prometheus metrics: the standard process_*/nodejs_* ones unprefixed, and Switchboard's own (switchboard_*) per instance.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Db } from '../platform/store/db.js';
import { isPending } from '../sinks/webhook/queries.js';

export type DeliveryResult = 'delivered' | 'retry' | 'dead' | 'cancelled';

export class Metrics {
  readonly registry = new Registry();
  private readonly deliveries: Counter<'instance' | 'target' | 'result'>;
  private readonly latency: Histogram<'instance' | 'target'>;
  private readonly sends: Counter<'instance' | 'result'>;
  private readonly pacingWaits: Histogram<'instance'>;

  constructor(db: Db) {
    // Standard names, so stock Node.js dashboards match them; Switchboard's own metrics below carry `switchboard_`.
    collectDefaultMetrics({ register: this.registry });
    this.deliveries = new Counter({
      name: 'switchboard_webhook_deliveries_total',
      help: 'Webhook delivery attempts by result',
      labelNames: ['instance', 'target', 'result'],
      registers: [this.registry],
    });
    this.latency = new Histogram({
      name: 'switchboard_webhook_delivery_latency_seconds',
      help: 'Time from an event being written to its successful webhook delivery',
      labelNames: ['instance', 'target'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600],
      registers: [this.registry],
    });
    this.sends = new Counter({
      name: 'switchboard_sends_total',
      help: 'Queued sends by outcome (delivered, error)',
      labelNames: ['instance', 'result'],
      registers: [this.registry],
    });
    this.pacingWaits = new Histogram({
      name: 'switchboard_send_pacing_wait_seconds',
      help: "Time a paced send waited at its instance's pacing gate (rate, gap, new-chat delay, paced sends before it)",
      labelNames: ['instance'],
      buckets: [0.1, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600],
      registers: [this.registry],
    });
    new Gauge({
      name: 'switchboard_outbox_pending_deliveries',
      help: 'Webhook deliveries waiting to be delivered (outbox depth), per instance and target',
      labelNames: ['instance', 'target'],
      registers: [this.registry],
      async collect() {
        this.reset();
        const rows = await db
          .selectFrom('deliveries')
          .select(['instance_name', 'target', (eb) => eb.fn.countAll<number>().as('n')])
          .where(isPending('state'))
          .groupBy(['instance_name', 'target'])
          .execute();
        for (const row of rows) this.set({ instance: row.instance_name, target: row.target }, Number(row.n));
      },
    });
    new Gauge({
      name: 'switchboard_dead_deliveries',
      help: 'Dead-lettered webhook deliveries kept for replay, per instance',
      labelNames: ['instance'],
      registers: [this.registry],
      async collect() {
        this.reset();
        const rows = await db
          .selectFrom('deliveries')
          .select(['instance_name', (eb) => eb.fn.countAll<number>().as('n')])
          .where('state', '=', 'dead')
          .groupBy('instance_name')
          .execute();
        for (const row of rows) this.set({ instance: row.instance_name }, Number(row.n));
      },
    });
    new Gauge({
      name: 'switchboard_send_queue_pending',
      help: 'Sends accepted and not yet delivered, per instance',
      labelNames: ['instance'],
      registers: [this.registry],
      async collect() {
        this.reset();
        const rows = await db
          .selectFrom('send_queue')
          .innerJoin('instances', 'instances.id', 'send_queue.instance_id')
          .select(['instances.name as name', (eb) => eb.fn.countAll<number>().as('n')])
          .where('send_queue.state', '=', 'pending')
          .groupBy('instances.name')
          .execute();
        for (const row of rows) this.set({ instance: row.name }, Number(row.n));
      },
    });
  }

  /** The gauge of instances this node owns (their connections and sends run here), read from `count`. */
  ownedInstances(count: () => number): void {
    new Gauge({
      name: 'switchboard_instances_owned',
      help: 'Instances this node owns: their connections and sends run on this node',
      registers: [this.registry],
      collect() {
        this.set(count());
      },
    });
  }

  deliveryOutcome(instance: string, target: string, result: DeliveryResult, createdAt: number): void {
    this.deliveries.inc({ instance, target, result });
    if (result === 'delivered') this.latency.observe({ instance, target }, Math.max(0, Date.now() - createdAt) / 1000);
  }

  sendOutcome(instance: string, result: 'delivered' | 'error'): void {
    this.sends.inc({ instance, result });
  }

  pacingWait(instance: string, waitedMs: number): void {
    this.pacingWaits.observe({ instance }, waitedMs / 1000);
  }
}
