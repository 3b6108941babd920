// Retry waits for webhook deliveries: exponential growth, capped, spread by jitter, never below the first wait.
import type { Config } from '../../platform/config.js';

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  factor: number;
  /** 0–1: the wait is moved by up to this fraction of itself, either way. */
  jitter: number;
}

export function backoffPolicy(config: Config): BackoffPolicy {
  return {
    initialMs: config.webhookRetryInitialDelayMs,
    maxMs: config.webhookRetryMaxDelayMs,
    factor: config.webhookRetryBackoffFactor,
    jitter: config.webhookRetryJitterFactor,
  };
}

/** Wait after failed attempt `n` (1-based): min(initial × factor^(n−1), max) ± jitter × that, at least initial. */
export function retryDelayMs(policy: BackoffPolicy, n: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, n - 1);
  const base = Math.min(policy.initialMs * policy.factor ** exponent, policy.maxMs);
  const spread = policy.jitter * base * (2 * random() - 1);
  return Math.max(policy.initialMs, Math.round(base + spread));
}
