// Runs async work one piece at a time, in the order given: connection reports must reach the host in order.

export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** Queues `work` after everything queued before; never call it from inside queued work (it would wait on itself). */
  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
