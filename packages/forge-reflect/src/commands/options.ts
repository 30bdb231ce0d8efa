/**
 * What a command declares beside itself (`<name>.options.ts`), and the option shapes most commands
 * share. Cheap on purpose: cli.ts imports every command's options to build the parser, and only
 * the command that runs loads its module (`load`).
 */
import type { Argv } from 'yargs';

export type CommandRun = (args: Record<string, unknown>) => Promise<number>;

export interface CommandSpec {
  command: string;
  describe: string;
  builder: (y: Argv) => Argv;
  examples: ReadonlyArray<readonly [string, string]>;
  load: () => Promise<CommandRun>;
}

/** A boolean switch, off unless given (`--json`, `--dry-run`, …). */
export const flag = (describe: string) => ({ type: 'boolean', default: false, describe }) as const;

/** A string option, or a positional operand. */
export const text = (describe: string) => ({ type: 'string', describe }) as const;

/** A string option that may be repeated (`--dir a --dir b`), or a variadic operand. */
export const texts = (describe: string) => ({ type: 'string', array: true, describe }) as const;

/** A string option the command cannot run without. */
export const required = (describe: string) => ({ type: 'string', demandOption: true, describe }) as const;
