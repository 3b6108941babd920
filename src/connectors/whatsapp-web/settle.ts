// Waiting for a condition that changes when the connector says so (notify), with a time limit.

export class Settle {
  private readonly waiters = new Set<() => void>();

  /** Resolves once `settled()` holds (checked now and at every notify), or after `timeoutMs`. */
  until(settled: () => boolean, timeoutMs: number): Promise<void> {
    if (settled()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const check = () => {
        if (settled()) done();
      };
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      this.waiters.add(check);
    });
  }

  notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
