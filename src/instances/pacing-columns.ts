// An instance's own pacing in its row: one nullable column per field (null: the service's default), so that
// concurrent changes of different fields all stay, like the behaviour settings.
import type { Selectable } from 'kysely';
import type { InstancesTable } from '../platform/store/schema.js';
import type { Pacing, PacingChoice } from '../core/pacing.js';

const pacingColumn = {
  enabled: 'pacing_enabled',
  maxPerMinute: 'pacing_max_per_minute',
  minGapMs: 'pacing_min_gap_ms',
  maxGapMs: 'pacing_max_gap_ms',
  newChatDelayMs: 'pacing_new_chat_delay_ms',
} as const satisfies Record<keyof Pacing, keyof InstancesTable>;

type PacingColumns = { -readonly [K in keyof Pacing as (typeof pacingColumn)[K]]: number | null };

/** The fields the row sets; undefined when it sets none. */
export function pacingFromRow(row: Selectable<InstancesTable>): PacingChoice | undefined {
  const choice: PacingChoice = {};
  if (row.pacing_enabled !== null) choice.enabled = row.pacing_enabled === 1;
  if (row.pacing_max_per_minute !== null) choice.maxPerMinute = row.pacing_max_per_minute;
  if (row.pacing_min_gap_ms !== null) choice.minGapMs = row.pacing_min_gap_ms;
  if (row.pacing_max_gap_ms !== null) choice.maxGapMs = row.pacing_max_gap_ms;
  if (row.pacing_new_chat_delay_ms !== null) choice.newChatDelayMs = row.pacing_new_chat_delay_ms;
  return Object.keys(choice).length > 0 ? choice : undefined;
}

/** Every pacing column of a new row: the fields chosen, null for the others. */
export function allPacingColumns(choice: PacingChoice | undefined): PacingColumns {
  return {
    pacing_enabled: choice?.enabled === undefined ? null : Number(choice.enabled),
    pacing_max_per_minute: choice?.maxPerMinute ?? null,
    pacing_min_gap_ms: choice?.minGapMs ?? null,
    pacing_max_gap_ms: choice?.maxGapMs ?? null,
    pacing_new_chat_delay_ms: choice?.newChatDelayMs ?? null,
  };
}

/** The columns a change writes: only the fields it gives. */
export function changedPacingColumns(change: PacingChoice | undefined): Partial<PacingColumns> {
  const columns: Partial<PacingColumns> = {};
  if (!change) return columns;
  for (const field of Object.keys(pacingColumn) as (keyof Pacing)[]) {
    const value = change[field];
    if (value !== undefined) columns[pacingColumn[field]] = typeof value === 'boolean' ? Number(value) : value;
  }
  return columns;
}
