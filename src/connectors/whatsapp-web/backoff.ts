// Reconnect waits: exponential growth from a base to a ceiling, with jitter so many instances never reconnect in step.

export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  /** A number in [0, 1); Math.random unless a test pins it. */
  random?: () => number;
}

/**
 * The wait before reconnect attempt `attempt` (1 = the first): base·2^(attempt−1), capped at the ceiling, then a
 * random point in the upper half of that ("equal jitter"), so it is never shorter than half the step and never zero.
 */
export function reconnectDelay(attempt: number, { baseMs, maxMs, random = Math.random }: BackoffOptions): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  const step = Math.min(maxMs, baseMs * 2 ** exponent);
  return Math.max(1, Math.round(step / 2 + random() * (step / 2)));
}
