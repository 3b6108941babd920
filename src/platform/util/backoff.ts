// Retry waits: exponential growth from a first wait to a ceiling, spread by jitter so many retriers never go in step.

/**
 * How a wait is spread. A number in 0–1: the wait moves by up to that fraction of itself, either way, and never below
 * the first wait (0: no spread). `upper-half` ("equal jitter"): a random point in the upper half of the step, so it is
 * never shorter than half the step and never zero.
 */
type Jitter = number | 'upper-half';

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  /** Growth of the wait per attempt. */
  factor: number;
  jitter: Jitter;
}

/**
 * The wait after failed attempt `attempt` (1 = the first): the step min(initial × factor^(attempt−1), max), spread by
 * the policy's jitter. `random` gives a number in [0, 1); Math.random unless a test pins it.
 */
export function delayFor(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, attempt - 1);
  // A huge exponent makes the product Infinity, which the ceiling caps.
  const step = Math.min(policy.initialMs * policy.factor ** exponent, policy.maxMs);
  if (policy.jitter === 'upper-half') return Math.max(1, Math.round(step / 2 + random() * (step / 2)));
  const spread = policy.jitter * step * (2 * random() - 1);
  return Math.max(policy.initialMs, Math.round(step + spread));
}
