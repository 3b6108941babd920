// A start-up failure a person can act on: one line naming the setting to fix, printed without a stack trace.

/** Why the service cannot start, as one line that begins with the setting to change (e.g. `SERVER_PORT: …`). */
export class StartupError extends Error {
  constructor(
    readonly setting: string,
    problem: string,
    options?: { cause?: unknown },
  ) {
    super(`${setting}: ${problem}`, options);
    this.name = 'StartupError';
  }
}

/** What is printed when the service cannot start: the error's one line, and its stack only when asked for. */
export function startupFailureText(error: unknown, withStack: boolean): string {
  if (error instanceof StartupError) {
    const cause = error.cause instanceof Error ? error.cause.stack : undefined;
    return withStack && cause ? `${error.message}\n${cause}\n` : `${error.message}\n`;
  }
  if (!(error instanceof Error)) return `switchboard failed to start: ${String(error)}\n`;
  if (withStack) return `switchboard failed to start: ${error.stack ?? error.message}\n`;
  return `switchboard failed to start: ${error.message.replace(/\s*\n\s*/g, ' ')} (LOG_LEVEL=debug shows where)\n`;
}
