// Bounded waiting for tests: poll a probe until it answers, or fail after a deadline; and a plain sleep.

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface WaitOptions {
  /** How often the probe runs (20 ms unless told). */
  intervalMs?: number;
  /** What the test waits for, named in the timeout error; a function is read only when the wait fails. */
  what?: string | (() => string);
}

/**
 * Runs `probe` until it answers something truthy and returns that answer; throws once `timeoutMs` has passed.
 * A probe that throws ends the wait with its error (a wait that can no longer succeed).
 */
export async function waitFor<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 5000,
  { intervalMs = 20, what = 'condition' }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${typeof what === 'function' ? what() : what} not met within ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}
