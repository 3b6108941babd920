// Per-instance event destination settings (webhook, websocket, …) kept in the store and cached in memory; every change
// is signalled on `sinks` (its instance id) at commit, and each node of the store reads that instance's settings back.
import type { Selectable } from 'kysely';
import type { Db } from '../platform/store/db.js';
import type { Unit } from '../platform/store/unit.js';
import type { Database } from '../platform/store/schema.js';
import type { StoreSignals } from '../platform/store/signals.js';
import { followChanges } from '../platform/store/batched-refresh.js';
import { LocalChanges } from '../platform/store/local-changes.js';
import type { SinkConfig, SinkKind } from '../core/event-sink.js';
import { resolveEventName, subscribed, type EventName } from '../core/event-catalog.js';

export type { SinkConfig, SinkKind } from '../core/event-sink.js';

/** Whether a destination's settings want `event`: enabled, and subscribed to it (an empty list: every event). */
export function sinkWants(sink: SinkConfig | undefined, event: EventName): boolean {
  return sink?.enabled === true && subscribed(sink.events, event);
}

function fromRow(row: Selectable<Database['event_sinks']>): SinkConfig {
  return {
    enabled: row.enabled === 1,
    events: (JSON.parse(row.events) as string[]).map(resolveEventName).filter((e): e is EventName => !!e),
    options: JSON.parse(row.options) as Record<string, unknown>,
    updatedAt: row.updated_at,
  };
}

/** The signal channel of sink settings changes; the payload is the instance id. */
const changesChannel = 'sinks';
/** Instances read back per statement. */
const idsPerRead = 500;

export class SinkConfigs {
  private readonly cache = new Map<string, Map<SinkKind, SinkConfig>>();
  /** Changes made here: a read-back that raced one is read again rather than applied over it. */
  private readonly localChanges = new LocalChanges();

  constructor(
    private readonly db: Db,
    /** Where changes are told to the nodes of the store (none: this process is the only one that reads them). */
    private readonly signals?: Pick<StoreSignals, 'sendIn'>,
  ) {}

  /**
   * Reads every instance's settings (at start, and after signals may have been missed). An instance whose settings
   * changed here while they were read keeps what it has: answered, to be read again.
   */
  async load(): Promise<string[]> {
    const mark = this.localChanges.markAll();
    const rows = await this.db.selectFrom('event_sinks').selectAll().execute();
    const again = new Set<string>();
    for (const id of new Set([...this.cache.keys(), ...rows.map((row) => row.instance_id)])) {
      if (this.localChanges.racedSinceAll(id, mark)) again.add(id);
      else this.cache.delete(id);
    }
    for (const row of rows) if (!again.has(row.instance_id)) this.remember(row.instance_id, row.sink as SinkKind, fromRow(row));
    return [...again];
  }

  /**
   * Follows changes made on any node of the store (this one included): each changed instance's settings are read back,
   * everything after signals may have been missed. Answers how to stop.
   */
  follow(signals: StoreSignals, onError: (error: unknown) => void): () => void {
    return followChanges(signals, changesChannel, {
      read: (ids) => (ids === 'all' ? this.load() : this.refreshMany(ids)),
      onError,
    });
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
    await this.signals?.sendIn(unit, changesChannel, instanceId);
    // Visible to event emission in this same unit (e.g. a creation webhook gets the creation's first events).
    const previous = this.get(instanceId, sink);
    this.localChanges.madeIn(unit, instanceId);
    this.remember(instanceId, sink, config);
    unit.onRollback(() => {
      if (previous) this.remember(instanceId, sink, previous);
      else this.cache.get(instanceId)?.delete(sink);
    });
  }

  /** The instance's settings were deleted in the unit (with the instance): forgotten here at commit, and on every node. */
  async removed(unit: Unit, instanceId: string): Promise<void> {
    await this.signals?.sendIn(unit, changesChannel, instanceId);
    unit.afterCommit(() => {
      this.cache.delete(instanceId);
      this.localChanges.forget(instanceId);
    });
  }

  /** Reads these instances' settings back; answers those whose read raced a change made here (read them again). */
  private async refreshMany(ids: string[]): Promise<string[]> {
    const again: string[] = [];
    for (let start = 0; start < ids.length; start += idsPerRead) {
      const chunk = ids.slice(start, start + idsPerRead);
      const mark = this.localChanges.mark(chunk);
      const rows = await this.db.selectFrom('event_sinks').selectAll().where('instance_id', 'in', chunk).execute();
      const fresh = chunk.filter((id, index) => {
        if (!this.localChanges.raced(id, mark, index)) return true;
        again.push(id);
        return false;
      });
      for (const id of fresh) this.cache.delete(id);
      const freshIds = new Set(fresh);
      for (const row of rows) if (freshIds.has(row.instance_id)) this.remember(row.instance_id, row.sink as SinkKind, fromRow(row));
    }
    return again;
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
