// Waiters for the first delivery attempt of a send, for connectors that know a send's outcome at once.

export type FirstAttempt = { kind: 'sent' } | { kind: 'queued' } | { kind: 'refused'; error: Error };

export class SendOutcomes {
  private readonly waiters = new Map<string, (outcome: FirstAttempt) => void>();

  /** Resolves with the first attempt's outcome, or `queued` after `timeoutMs` (the send stays in the queue). */
  wait(messageId: string, timeoutMs: number): Promise<FirstAttempt> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(messageId);
        resolve({ kind: 'queued' });
      }, timeoutMs);
      timer.unref();
      this.waiters.set(messageId, (outcome) => {
        clearTimeout(timer);
        this.waiters.delete(messageId);
        resolve(outcome);
      });
    });
  }

  settle(messageId: string, outcome: FirstAttempt): void {
    this.waiters.get(messageId)?.(outcome);
  }
}
