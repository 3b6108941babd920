// Column values as PostgreSQL and MySQL/MariaDB drivers hand them, made one shape (booleans, JSON, text, numbers).

/** A boolean column: PostgreSQL gives booleans, MySQL tinyint(1) gives 0/1; null takes the column's default. */
export function bool(value: unknown, fallback = false): boolean {
  if (value === null || value === undefined) return fallback;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return Number(value) !== 0;
  if (typeof value === 'string') return value === '1' || value.toLowerCase() === 'true';
  if (Buffer.isBuffer(value)) return value.length > 0 && value[0] !== 0;
  return fallback;
}

/** A text column (null stays null). */
export function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return String(value);
}

/** An integer column (bigints and numeric strings included); null when absent or not a number. */
export function int(value: unknown): number | null {
  if (value === null || value === undefined || value === '') return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

/** A timestamp column as epoch milliseconds. */
export function epochMs(value: unknown): number | null {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.getTime();
  if (typeof value === 'string') {
    const t = Date.parse(value);
    return Number.isNaN(t) ? null : t;
  }
  return int(value);
}

/**
 * A JSON column: PostgreSQL's jsonb and MySQL's JSON arrive parsed, MariaDB's JSON (a LONGTEXT) as text. Text that is
 * not JSON is answered as it is (the caller decides what an odd value means).
 */
export function json(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return json(value.toString('utf8'));
  if (typeof value !== 'string') return value ?? null;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}
