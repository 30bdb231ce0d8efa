/**
 * `--` ends the options: what follows it are operands, even when they start with `-`
 * (`forge-reflect risk --json -- -odd-name.ts`). yargs keeps such arguments out of a command's
 * positionals, so the CLI splits them off itself and hands them to the positionals the command
 * declares (`show <sidecar>`, `validate <paths..>`, `risk [files..]`), in order, after any given
 * before the `--`.
 */
import { usageError } from './errors.js';

export interface Positional {
  name: string;
  required: boolean;
  variadic: boolean;
}

/** The arguments before the first `--`, and those after it (undefined without a `--`). */
export function splitAtDoubleDash(argv: readonly string[]): { options: string[]; operands: string[] | undefined } {
  const at = argv.indexOf('--');
  if (at < 0) return { options: [...argv], operands: undefined };
  return { options: argv.slice(0, at), operands: argv.slice(at + 1) };
}

/** The positionals of a yargs command string: `learn <action> [target]`, `risk [files..]`. */
export function positionalsOf(command: string): Positional[] {
  return [...command.matchAll(/([<[])([^\]>.]+)(\.\.)?[\]>]/g)].map((m) => ({ name: m[2] as string, required: m[1] === '<', variadic: m[3] !== undefined }));
}

/** The command string with every positional optional: its values may come after the `--`. */
export function withOptionalPositionals(command: string): string {
  return command.replace(/<([^>]+)>/g, '[$1]');
}

/**
 * Fills the command's positionals from the operands: a positional already given keeps its value,
 * a variadic one takes all that are left. A required one still missing, or an operand that no
 * positional takes, is a usage error.
 */
export function fillPositionals(
  args: Record<string, unknown>,
  positionals: readonly Positional[],
  operands: readonly string[],
  command: string,
): Record<string, unknown> {
  const rest = [...operands];
  const filled: Record<string, unknown> = { ...args };
  for (const p of positionals) {
    if (p.variadic) {
      const before = Array.isArray(filled[p.name]) ? (filled[p.name] as unknown[]).map(String) : [];
      filled[p.name] = [...before, ...rest.splice(0)];
      if (p.required && (filled[p.name] as string[]).length === 0) throw usageError(`${command.split(' ')[0]} needs ${p.name}, e.g. after the --`);
    } else {
      if (filled[p.name] === undefined && rest.length > 0) filled[p.name] = rest.shift();
      if (p.required && filled[p.name] === undefined) throw usageError(`${command.split(' ')[0]} needs ${p.name}, e.g. after the --`);
    }
  }
  if (rest.length > 0)
    throw usageError(
      `unexpected argument after --: ${JSON.stringify(rest[0])}; ${command.split(' ')[0]} takes ${positionals.length === 0 ? 'no paths or names' : positionals.map((p) => p.name).join(', ')}`,
    );
  return filled;
}
