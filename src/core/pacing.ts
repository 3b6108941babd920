// Sending like a person: an instance's pacing of its sends (rate, random gap, slower start in new chats) and its limits.

/** How an instance's sends are paced when `enabled`: across all its chats, one message at a time. */
export interface Pacing {
  enabled: boolean;
  /** Most messages leaving in any 60 s. */
  maxPerMinute: number;
  /** The gap between two messages of the instance is drawn uniformly in [minGapMs, maxGapMs]. */
  minGapMs: number;
  maxGapMs: number;
  /** Extra wait before the first message to a chat the instance has never sent a message to. */
  newChatDelayMs: number;
}

/** The fields an instance set for itself; the others come from the service's defaults (PACING_* variables). */
export type PacingChoice = Partial<Pacing>;

/** The bounds of each numeric field (the API's schema and the PACING_* variables share them). */
export const pacingLimits = {
  maxPerMinute: { min: 1, max: 600 },
  minGapMs: { min: 0, max: 600_000 },
  maxGapMs: { min: 0, max: 600_000 },
  newChatDelayMs: { min: 0, max: 600_000 },
} as const;

/** The pacing in effect: the instance's own fields over the defaults. */
export function effectivePacing(defaults: Pacing, choice: PacingChoice | undefined): Pacing {
  if (!choice) return defaults;
  return {
    enabled: choice.enabled ?? defaults.enabled,
    maxPerMinute: choice.maxPerMinute ?? defaults.maxPerMinute,
    minGapMs: choice.minGapMs ?? defaults.minGapMs,
    maxGapMs: choice.maxGapMs ?? defaults.maxGapMs,
    newChatDelayMs: choice.newChatDelayMs ?? defaults.newChatDelayMs,
  };
}

/** The choice with `change`'s fields replacing its own (fields left out keep their value). */
export function mergePacing(current: PacingChoice | undefined, change: PacingChoice): PacingChoice {
  const next: PacingChoice = { ...current };
  for (const key of Object.keys(change) as (keyof Pacing)[]) {
    if (change[key] !== undefined) (next as Record<keyof Pacing, unknown>)[key] = change[key];
  }
  return next;
}

/** What is wrong with a pacing as a whole (each field's own bounds are checked by the schema), or null. */
export function pacingProblem(pacing: Pacing): string | null {
  if (pacing.minGapMs > pacing.maxGapMs) {
    return `pacing.minGapMs (${pacing.minGapMs}) must not be greater than pacing.maxGapMs (${pacing.maxGapMs})`;
  }
  return null;
}
