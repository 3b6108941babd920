// The columns a set of rows to insert together fills: what every multi-row INSERT of ours lists.

/** Every column any of the rows has, in first-seen order (a row without one inserts null there). */
export function columnsOf(rows: readonly Record<string, unknown>[]): string[] {
  const columns = Object.keys(rows[0] ?? {});
  // Rows of a table mostly share their columns: the set is made only once a row has one the first did not.
  let known: Set<string> | undefined;
  for (let r = 1; r < rows.length; r++) {
    for (const column in rows[r]) {
      if (column in rows[0]) continue;
      known ??= new Set(columns);
      if (!known.has(column)) {
        known.add(column);
        columns.push(column);
      }
    }
  }
  return columns;
}
