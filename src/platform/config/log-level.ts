// Log levels: pino's names, and how Evolution's level lists map onto them.

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

const logLevels: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The level a LOG_LEVEL text names; never a problem: an unknown text means info. */
export function logLevelFrom(text: string): LogLevel {
  const lower = text.toLowerCase();
  if (logLevels.includes(lower as LogLevel)) return lower as LogLevel;
  // Evolution deployments carry lists such as "ERROR,WARN,INFO"; map them to the most verbose pino level named.
  if (lower.includes('debug') || lower.includes('verbose')) return 'debug';
  if (lower.includes('info') || lower.includes('log')) return 'info';
  if (lower.includes('warn')) return 'warn';
  if (lower.includes('error')) return 'error';
  return 'info';
}
