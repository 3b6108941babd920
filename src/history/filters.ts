// The filters and paging the find routes share: addresses as given or as numbers, times as dates or epochs, pages.
import { invalidInput } from '../core/errors.js';
import { toJid } from '../messages/jid.js';

/** An address as given (anything with an @ is taken as is), or a number turned into one. */
export function addressFilter(value: string, field: string): string {
  const trimmed = value.trim();
  return trimmed.includes('@') ? trimmed : toJid(trimmed, field);
}

/** Below this an epoch number is taken as seconds, from it as milliseconds (10^11 s is the year 5138). */
const millisecondsFrom = 1e11;

/** A time given as an epoch (seconds or milliseconds) or an ISO 8601 date, in epoch seconds. */
export function epochSeconds(value: string | number, field: string): number {
  const numeric = typeof value === 'number' ? value : /^\d+$/.test(value.trim()) ? Number(value) : undefined;
  if (numeric !== undefined) {
    if (!Number.isFinite(numeric) || numeric < 0) throw invalidInput(`${field} must be a date (ISO 8601) or an epoch time in seconds or milliseconds`);
    return Math.floor(numeric >= millisecondsFrom ? numeric / 1000 : numeric);
  }
  const parsed = Date.parse(value as string);
  if (Number.isNaN(parsed)) throw invalidInput(`${field} "${String(value)}" is not a date: give an ISO 8601 date or an epoch time in seconds or milliseconds`);
  return Math.floor(parsed / 1000);
}

/** A time range in epoch seconds; each end optional. */
export interface TimeRange {
  gte?: number;
  lte?: number;
}

export function timeRange(range: { gte?: string | number; lte?: string | number } | undefined, field: string): TimeRange | undefined {
  if (!range) return undefined;
  return {
    ...(range.gte !== undefined ? { gte: epochSeconds(range.gte, `${field}.gte`) } : {}),
    ...(range.lte !== undefined ? { lte: epochSeconds(range.lte, `${field}.lte`) } : {}),
  };
}

/** A page of `size` rows: how many to skip. */
export function pageOf(page: number | undefined, size: number): { page: number; size: number; skip: number } {
  const current = page ?? 1;
  return { page: current, size, skip: (current - 1) * size };
}

/** Epoch milliseconds or seconds as an ISO date. */
export function isoDate(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
