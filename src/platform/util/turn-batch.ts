// Calls made in one turn of the event loop, answered by one call on all of them (a read by many ids, a bulk write).

interface Waiting<In, Out> {
  item: In;
  resolve: (value: Out) => void;
  reject: (error: unknown) => void;
}

/**
 * Gathers the items asked for until the next turn of the event loop (at most `maxBatch` a call) and hands them to
 * `run` together, which answers one result per item, in order. Batches run side by side (each is independent: use
 * `BatchCommit` where writes must commit in order). A failed batch fails each of its callers with its error.
 */
export class TurnBatch<In, Out> {
  private waiting: Waiting<In, Out>[] = [];
  private scheduled = false;

  constructor(
    private readonly run: (items: In[]) => Promise<Out[]>,
    private readonly maxBatch = 1000,
  ) {}

  call(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const all = this.waiting;
    this.waiting = [];
    for (let start = 0; start < all.length; start += this.maxBatch) void this.runBatch(all.slice(start, start + this.maxBatch));
  }

  private async runBatch(batch: Waiting<In, Out>[]): Promise<void> {
    try {
      const results = await this.run(batch.map((w) => w.item));
      batch.forEach((w, i) => {
        w.resolve(results[i]);
      });
    } catch (error) {
      for (const w of batch) w.reject(error);
    }
  }
}

/** Reads by key gathered per turn: `read` answers what it found for the distinct keys asked (absent: `missing`). */
export function keyedTurnBatch<Out>(read: (keys: string[]) => Promise<Map<string, Out>>, missing: Out, maxBatch = 1000): TurnBatch<string, Out> {
  return new TurnBatch<string, Out>(async (keys) => {
    const found = await read([...new Set(keys)]);
    return keys.map((key) => (found.has(key) ? (found.get(key) as Out) : missing));
  }, maxBatch);
}

/** Rows by key gathered per turn: `read` answers the rows of the distinct keys asked, each caller gets its key's rows. */
export function groupedTurnBatch<Row>(read: (keys: string[]) => Promise<Row[]>, keyOf: (row: Row) => string, maxBatch = 1000): TurnBatch<string, Row[]> {
  return keyedTurnBatch<Row[]>(
    async (keys) => {
      const byKey = new Map<string, Row[]>();
      for (const row of await read(keys)) {
        const key = keyOf(row);
        const rows = byKey.get(key);
        if (rows) rows.push(row);
        else byKey.set(key, [row]);
      }
      return byKey;
    },
    [],
    maxBatch,
  );
}
