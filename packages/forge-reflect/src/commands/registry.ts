/**
 * Every command: its name, options and examples (cheap), and a loader for the module that does
 * the work (imported only when the command runs).
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

export const COMMANDS: readonly CommandSpec[] = [
  {
    command: 'schema',
    describe: 'Print a committed JSON Schema (reflection.v1 by default)',
    builder: (y) =>
      y.option('name', {
        type: 'string',
        choices: ['reflection.v1', 'reflection-input.v1'],
        default: 'reflection.v1',
        describe: 'which schema to print',
      }),
    examples: [['$0 schema > reflection.v1.schema.json', 'save the sidecar schema']],
    load: async () => (await import('./schema.js')).run,
  },
  {
    command: 'validate <paths..>',
    describe: 'Validate sidecars (files, or folders searched for *.reflection.json) against the schema',
    builder: (y) =>
      y
        .positional('paths', { type: 'string', array: true, describe: 'sidecar files or folders' })
        .option('json', { type: 'boolean', default: false, describe: 'print a JSON result' }),
    examples: [
      ['$0 validate .forge/reflections', 'check every sidecar in the state folder'],
      ['$0 validate a.reflection.json --json', 'a machine-readable result'],
    ],
    load: async () => (await import('./validate.js')).run,
  },
  {
    command: 'risk [files..]',
    describe: 'Evaluate the review risk floor for paths, or for the current git change with --git',
    builder: (y) =>
      y
        .positional('files', { type: 'string', array: true, describe: 'repo-relative paths' })
        .option('git', { type: 'boolean', default: false, describe: 'use the files the working tree changed (tracked and untracked)' })
        .option('base', { type: 'string', describe: 'with --git: compare against this revision instead of HEAD' })
        .option('threshold', { type: 'string', describe: 'needs_review when score >= this (0..1; default $REFLECTION_RISK_THRESHOLD or 0.5)' })
        .option('fail-on-review', { type: 'boolean', default: false, describe: 'exit 3 when the change needs review (for CI gates)' })
        .option('json', { type: 'boolean', default: false, describe: 'print the verdict as JSON' }),
    examples: [
      ['$0 risk src/auth/token.ts README.md', 'the floor for two paths'],
      ['$0 risk --git --base origin/main --fail-on-review', 'gate a pull request in CI'],
    ],
    load: async () => (await import('./risk.js')).run,
  },
];
