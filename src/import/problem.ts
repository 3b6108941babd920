// Why one Evolution instance cannot be imported: a reason a person can act on, failing that instance alone.

export class ImportProblem extends Error {
  override readonly name = 'ImportProblem';
}

/** The message of anything thrown, for a one-line report. */
export function reasonOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
