// Per-instance event destination settings (webhook, websocket, …) kept in the store and cached in memory.
import type { Db } from '../platform/store/db.js';
import type { Unit } from '../platform/store/unit.js';
import type { SinkConfig, SinkKind } from '../core/event-sink.js';
import { resolveEventName, subscribed, type EventName } from '../core/event-catalog.js';

export type { SinkConfig, SinkKind } from '../core/event-sink.js';

/** Whether a destination's settings want `event`: enabled, and subscribed to it (an empty list: every event). */
export function sinkWants(sink: SinkConfig | undefined, event: EventName): boolean {
  return sink?.enabled === true && subscribed(sink.events, event);
}

export class SinkConfigs {
  private readonly cache = new Map<string, Map<SinkKind, SinkConfig>>();

  constructor(private readonly db: Db) {}

  async load(): Promise<void> {
    const rows = await this.db.selectFrom('event_sinks').selectAll().execute();
    this.cache.clear();
    for (const row of rows) {
      this.remember(row.instance_id, row.sink as SinkKind, {
        enabled: row.enabled === 1,
        events: (JSON.parse(row.events) as string[]).map(resolveEventName).filter((e): e is EventName => !!e),
        options: JSON.parse(row.options) as Record<string, unknown>,
        updatedAt: row.updated_at,
      });
    }
  }

  get(instanceId: string, sink: SinkKind): SinkConfig | undefined {
    return this.cache.get(instanceId)?.get(sink);
  }

  /** Stores a sink config inside the unit; the cache follows once the unit commits. */
  async set(unit: Unit, instanceId: string, sink: SinkKind, config: SinkConfig): Promise<void> {
    const row = {
      instance_id: instanceId,
      sink,
      enabled: config.enabled ? 1 : 0,
      events: JSON.stringify(config.events),
      options: JSON.stringify(config.options),
      updated_at: config.updatedAt,
    };
    await unit.tx
      .insertInto('event_sinks')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['instance_id', 'sink']).doUpdateSet({
          enabled: row.enabled,
          events: row.events,
          options: row.options,
          updated_at: row.updated_at,
        }),
      )
      .execute();
    // Visible to event emission in this same unit (e.g. a creation webhook gets the creation's first events).
    const previous = this.get(instanceId, sink);
    this.remember(instanceId, sink, config);
    unit.onRollback(() => {
      if (previous) this.remember(instanceId, sink, previous);
      else this.cache.get(instanceId)?.delete(sink);
    });
  }

  forget(instanceId: string): void {
    this.cache.delete(instanceId);
  }

  private remember(instanceId: string, sink: SinkKind, config: SinkConfig): void {
    let sinks = this.cache.get(instanceId);
    if (!sinks) {
      sinks = new Map();
      this.cache.set(instanceId, sinks);
    }
    sinks.set(sink, config);
  }
}
