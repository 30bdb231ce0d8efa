/** Exit statuses of the CLI: 0 fine, 1 bad input or a failed check, 2 bad usage. */
export const EXIT_OK = 0;
export const EXIT_BAD_INPUT = 1;
export const EXIT_USAGE = 2;

/**
 * An error the user can fix. Printed as one line (`forge-reflect: <problem>; <fix>`), never as a
 * stack trace, and mapped to its exit status.
 */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_BAD_INPUT,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

export function usageError(message: string): UserError {
  return new UserError(message, EXIT_USAGE);
}

/** Tells the user on stderr what went wrong and returns the exit status: the CLI's one way to fail. */
export function reportFailure(error: unknown): number {
  if (error instanceof UserError) {
    process.stderr.write(`forge-reflect: ${error.message}\n`);
    if (error.exitCode === EXIT_USAGE) process.stderr.write('Run `forge-reflect --help` for the commands and their options.\n');
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`forge-reflect: internal error: ${message}\nPlease report it with the command you ran.\n`);
  return 70;
}
