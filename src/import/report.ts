// The import's words: a progress line per instance (and its details), and the summary at the end.

export type Outcome =
  | {
      name: string;
      result: 'imported' | 'would import';
      details: string[];
      notCarried: string[];
      warnings: string[];
      sharedMetaKey: boolean;
      /** It goes out through a proxy (imported unchecked: the import never contacts it). */
      proxied: boolean;
    }
  | { name: string; result: 'skipped'; reason: string }
  | { name: string; result: 'failed'; reason: string };

export interface ImportSummary {
  dryRun: boolean;
  /** Where the instances came from, without credentials. */
  source: string;
  outcomes: Outcome[];
}

/** The lines of one instance's outcome: the progress line, then what was not carried over and what to know. */
export function outcomeLines(outcome: Outcome, index: number, total: number): string[] {
  const head = `[${index}/${total}] ${outcome.name}`;
  if (outcome.result === 'skipped') return [`${head}: skipped: ${outcome.reason}`];
  if (outcome.result === 'failed') return [`${head}: FAILED: ${outcome.reason}`];
  return [
    `${head}: ${outcome.result}${outcome.details.length > 0 ? `: ${outcome.details.join('; ')}` : ''}`,
    ...outcome.notCarried.map((what) => `    not carried over: ${what}`),
    ...outcome.warnings.map((what) => `    note: ${what}`),
  ];
}

export function summaryLines(summary: ImportSummary): string[] {
  const count = (result: Outcome['result']) => summary.outcomes.filter((o) => o.result === result);
  const done = count(summary.dryRun ? 'would import' : 'imported');
  const skipped = count('skipped');
  const failed = count('failed') as Extract<Outcome, { result: 'failed' }>[];
  const lines = [
    '',
    `Summary: ${done.length} ${summary.dryRun ? 'would be imported' : 'imported'}, ${skipped.length} skipped, ${failed.length} failed (from ${summary.source})`,
  ];
  if (failed.length > 0) lines.push('Failed:', ...failed.map((o) => `  ${o.name}: ${o.reason}`));
  if (skipped.length > 0) lines.push('Skipped:', ...(skipped as Extract<Outcome, { result: 'skipped' }>[]).map((o) => `  ${o.name}: ${o.reason}`));
  const shared = done.filter((o) => o.result !== 'skipped' && o.result !== 'failed' && o.sharedMetaKey).map((o) => o.name);
  if (shared.length > 0) {
    lines.push(
      `WHATSAPP-BUSINESS instances whose instance key is their Meta access token (as Evolution made it): ${shared.join(', ')}.`,
      '  Give each a key of its own (docs/migrating-from-evolution.md): a Switchboard-created instance never shares them.',
    );
  }
  const proxied = done.filter((o) => o.result !== 'skipped' && o.result !== 'failed' && o.proxied).map((o) => o.name);
  if (proxied.length > 0) {
    lines.push(
      `Instances going out through a proxy: ${proxied.join(', ')}. Their proxies were not contacted by the import:`,
      '  one that cannot be reached from Switchboard keeps its instance connecting, and connectionState says why.',
    );
  }
  if (summary.dryRun) lines.push('Dry run: nothing was written.');
  else if (done.length > 0) lines.push('Imported instances connect when Switchboard starts (restart a running Switchboard to pick them up).');
  return lines;
}
