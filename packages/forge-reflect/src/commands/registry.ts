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
  {
    command: 'ingest',
    describe: 'Drain the hook spool into the event log (.forge/events.db): redact, type, insert once',
    builder: (y) => y.option('json', { type: 'boolean', default: false, describe: 'print the counts as JSON' }),
    examples: [
      ['$0 ingest', 'move pending hook events into the log; prints drained / rejected / already present'],
      ['FORGE_DIR=/tmp/state $0 ingest --json', 'drain another state folder, counts as JSON'],
    ],
    load: async () => (await import('./ingest.js')).run,
  },
  {
    command: 'events',
    describe: 'List logged agent events, newest last (drains the spool first)',
    builder: (y) =>
      y
        .option('session', { type: 'string', describe: 'a session id, or its first characters' })
        .option('type', { type: 'string', describe: 'an event type: tool.executed, tool.failed, turn.stopped, …' })
        .option('tool', { type: 'string', describe: 'a tool name (any case), e.g. Bash' })
        .option('since', { type: 'string', describe: 'ISO-8601 time or an age: 30m, 2h, 7d' })
        .option('limit', { type: 'string', describe: 'show the latest N matching events (default 50)' })
        .option('json', { type: 'boolean', default: false, describe: 'print full rows, payload parsed, as JSON' }),
    examples: [
      ['$0 events --since 2h --tool Bash', 'the Bash calls of the last two hours'],
      ['$0 events --type tool.failed --session 7f3c2a9e --json', 'failed tool calls of one session, as JSON'],
    ],
    load: async () => (await import('./events.js')).run,
  },
  {
    command: 'install',
    describe: 'Vendor the hooks into a repo and merge their registration into .claude/settings.json',
    builder: (y) =>
      y
        .option('repo', { type: 'string', describe: 'the repository (default: the git top level of the cwd)' })
        .option('local', { type: 'boolean', default: false, describe: 'register in .claude/settings.local.json (personal, not committed)' })
        .option('dry-run', { type: 'boolean', default: false, describe: 'print the changes, write nothing' })
        .option('with-instructions', { type: 'boolean', default: false, describe: 'also add the /reflect slash command and print the CLAUDE.md snippet' })
        .option('json', { type: 'boolean', default: false, describe: 'print the changes as JSON' }),
    examples: [
      ['$0 install --dry-run', 'see what would change in this repo, write nothing'],
      ['$0 install --local --with-instructions', 'personal registration, plus the /reflect command'],
      ['$0 install --repo ../app --json', 'install into another repo, machine-readable'],
    ],
    load: async () => (await import('./install.js')).run,
  },
  {
    command: 'uninstall',
    describe: 'Remove exactly what install added (hook groups, vendored files); keeps .forge/',
    builder: (y) =>
      y
        .option('repo', { type: 'string', describe: 'the repository (default: the git top level of the cwd)' })
        .option('local', { type: 'boolean', default: false, describe: 'remove the registration from .claude/settings.local.json' })
        .option('dry-run', { type: 'boolean', default: false, describe: 'print the changes, write nothing' })
        .option('json', { type: 'boolean', default: false, describe: 'print the changes as JSON' }),
    examples: [
      ['$0 uninstall --dry-run', 'see what would be removed'],
      ['$0 uninstall --local', 'undo `install --local`'],
    ],
    load: async () => (await import('./uninstall.js')).run,
  },
  {
    command: 'self-report',
    describe: "Write the agent's self-report for this turn's reflection (read by the Stop hook)",
    builder: (y) =>
      y
        .option('confidence', { type: 'string', demandOption: true, describe: 'how likely the work is right as delivered: 0..1' })
        .option('surface', { type: 'string', demandOption: true, describe: 'where the likely flaw lands: auth|data|infra|ui|build|test|docs|none' })
        .option('wrong', { type: 'string', demandOption: true, describe: 'the single most likely way the work is wrong' })
        .option('not-in-diff', { type: 'string', describe: 'what you know that the diff does not show' })
        .option('session', { type: 'string', describe: 'the session id (the hook then ignores it in any other session)' })
        .option('file', { type: 'string', describe: 'where to write (default $REFLECTION_INPUT, else <state dir>/reflection-input.json)' })
        .option('json', { type: 'boolean', default: false, describe: 'print the result as JSON' }),
    examples: [
      [
        "$0 self-report --confidence 0.7 --surface auth --wrong 'token refresh is untested across an expiry' --not-in-diff 'staging uses a different issuer'",
        'leave a self-report for the Stop hook',
      ],
      ["$0 self-report --confidence 0.9 --surface none --wrong 'a typo in the new docs' --json", 'the file written, as JSON'],
    ],
    load: async () => (await import('./self-report.js')).run,
  },
  {
    command: 'report',
    describe: 'Summarise sidecars (review share, surfaces, confidence, degraded) and list them',
    builder: (y) =>
      y
        .option('dir', { type: 'string', array: true, describe: 'sidecar folder; repeat for a team view (default $REFLECTION_DIR or <state dir>/reflections)' })
        .option('since', { type: 'string', describe: 'only sidecars at or after this time (ISO-8601, or 30m, 2h, 7d)' })
        .option('until', { type: 'string', describe: 'only sidecars at or before this time' })
        .option('surface', { type: 'string', choices: ['auth', 'data', 'infra', 'ui', 'build', 'test', 'docs', 'none'], describe: 'only this risk surface' })
        .option('needs-review', { type: 'boolean', describe: 'only those that need review (--no-needs-review: only those that do not)' })
        .option('agent', { type: 'string', describe: 'only this agent' })
        .option('task', { type: 'string', describe: 'only this task_ref' })
        .option('session', { type: 'string', describe: 'only this session id (or a prefix of one)' })
        .option('degraded', { type: 'boolean', describe: 'only degraded sidecars (--no-degraded: only complete ones)' })
        .option('limit', { type: 'number', default: 50, describe: 'rows to list, newest first (the summary covers all)' })
        .option('format', { type: 'string', choices: ['table', 'markdown', 'csv', 'json'], default: 'table', describe: 'output format' })
        .option('json', { type: 'boolean', default: false, describe: 'same as --format json' }),
    examples: [
      ['$0 report --since 7d --needs-review', 'what needed review this week'],
      ['$0 report --format markdown --task acme#42 > review.md', 'a summary to paste into the pull request'],
      ['$0 report --dir alice/.forge/reflections --dir bob/.forge/reflections', 'a team view'],
    ],
    load: async () => (await import('./report.js')).run,
  },
  {
    command: 'show <sidecar>',
    describe: 'Print one sidecar readably (a path, or the start of its file name)',
    builder: (y) =>
      y
        .positional('sidecar', { type: 'string', describe: 'a sidecar file, or the start of its name in the report folders' })
        .option('dir', { type: 'string', array: true, describe: 'folders to look in (default as for report)' })
        .option('json', { type: 'boolean', default: false, describe: 'print the raw JSON' }),
    examples: [['$0 show 20261122T101500', 'the sidecar written at that time']],
    load: async () => (await import('./show.js')).run,
  },
  {
    command: 'demo',
    describe: 'See the whole kit work: a scripted agent session through the real hooks in a throwaway repo',
    builder: (y) =>
      y
        .option('dir', { type: 'string', describe: 'where to create the throwaway repo (default: the system temp folder)' })
        .option('json', { type: 'boolean', default: false, describe: 'print a JSON summary (repo, steps, events by type, the sidecar)' }),
    examples: [
      ['$0 demo', 'install into a scratch repo, play a session, print the report and the events'],
      ['$0 demo --json', 'the same, as JSON'],
    ],
    load: async () => (await import('./demo.js')).run,
  },
  {
    command: 'doctor',
    describe: 'Check the installation: node, hooks, registrations, mode, state folder, spool, event log',
    builder: (y) =>
      y
        .option('repo', { type: 'string', describe: 'the repository to check (default: the git top level of the cwd)' })
        .option('repair', { type: 'boolean', default: false, describe: 'move a corrupt event log aside and start a fresh one (sidecars and spool untouched)' })
        .option('json', { type: 'boolean', default: false, describe: 'print the checks as JSON' }),
    examples: [
      ['$0 doctor', 'check the kit in this repository'],
      ['$0 doctor --repair', 'also replace a corrupt event log'],
    ],
    load: async () => (await import('./doctor.js')).run,
  },
];
