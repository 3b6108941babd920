// Runs async work one piece at a time per key, in the order given; different keys run side by side (or under one key).

export class KeyedSerialQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Queues `work` after everything queued before under `key`; never call it from inside work of the same key. */
  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(work);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    // The last piece of a key forgets it, so keys do not pile up.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}

/** A queue of one key: work one piece at a time, in the order given. */
export class SerialQueue {
  private readonly lanes = new KeyedSerialQueue();

  /** Queues `work` after everything queued before; never call it from inside queued work (it would wait on itself). */
  run<T>(work: () => Promise<T>): Promise<T> {
    return this.lanes.run('', work);
  }
}
