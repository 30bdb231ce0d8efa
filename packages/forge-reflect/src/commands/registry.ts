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
        choices: ['reflection.v1', 'reflection-input.v1', 'review-result.v1', 'test-result.v1', 'feedback.v1'],
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
        .option('runtime', { type: 'string', describe: 'only events of this runtime: claude-code, codex, gemini, unknown, …' })
        .option('since', { type: 'string', describe: 'ISO-8601 time or an age: 30m, 2h, 7d' })
        .option('limit', { type: 'string', describe: 'show the latest N matching events (default 50)' })
        .option('json', { type: 'boolean', default: false, describe: 'print full rows, payload parsed, as JSON' }),
    examples: [
      ['$0 events --since 2h --tool Bash', 'the Bash calls of the last two hours'],
      ['$0 events --type tool.failed --session 7f3c2a9e --json', 'failed tool calls of one session, as JSON'],
      ['$0 events --runtime codex --type tool.failed', 'the failed tool calls of Codex sessions'],
    ],
    load: async () => (await import('./events.js')).run,
  },
  {
    command: 'install',
    describe: "Vendor the hooks into a repo and register them in each runtime's own file (Claude Code, Codex, Gemini CLI)",
    builder: (y) =>
      y
        .option('runtime', { type: 'string', array: true, describe: 'claude-code (default), codex, gemini or all; repeat for several' })
        .option('repo', { type: 'string', describe: 'the repository (default: the git top level of the cwd)' })
        .option('local', { type: 'boolean', default: false, describe: 'register in .claude/settings.local.json (personal, not committed)' })
        .option('dry-run', { type: 'boolean', default: false, describe: 'print the changes, write nothing' })
        .option('with-instructions', { type: 'boolean', default: false, describe: 'also add the /reflect slash command and print the CLAUDE.md snippet' })
        .option('json', { type: 'boolean', default: false, describe: 'print the changes as JSON' }),
    examples: [
      ['$0 install --dry-run', 'see what would change in this repo, write nothing'],
      ['$0 install --local --with-instructions', 'personal registration, plus the /reflect command'],
      ['$0 install --repo ../app --json', 'install into another repo, machine-readable'],
      ['$0 install --runtime codex --runtime gemini', 'register for Codex (.codex/hooks.json) and Gemini CLI (.gemini/settings.json)'],
    ],
    load: async () => (await import('./install.js')).run,
  },
  {
    command: 'uninstall',
    describe: 'Remove exactly what install added (hook groups, vendored files); keeps .forge/',
    builder: (y) =>
      y
        .option('runtime', { type: 'string', array: true, describe: 'claude-code (default), codex, gemini or all; repeat for several' })
        .option('repo', { type: 'string', describe: 'the repository (default: the git top level of the cwd)' })
        .option('local', { type: 'boolean', default: false, describe: 'remove the registration from .claude/settings.local.json' })
        .option('dry-run', { type: 'boolean', default: false, describe: 'print the changes, write nothing' })
        .option('json', { type: 'boolean', default: false, describe: 'print the changes as JSON' }),
    examples: [
      ['$0 uninstall --dry-run', 'see what would be removed'],
      ['$0 uninstall --local', 'undo `install --local`'],
      ['$0 uninstall --runtime all', 'remove the registrations of every runtime, then the vendored hooks'],
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
        .option('runtime', { type: 'string', describe: 'only sidecars written under this runtime (their agent): claude-code, codex, gemini' })
        .option('task', { type: 'string', describe: 'only this task_ref' })
        .option('session', { type: 'string', describe: 'only this session id (or a prefix of one)' })
        .option('degraded', { type: 'boolean', describe: 'only degraded sidecars (--no-degraded: only complete ones)' })
        .option('limit', { type: 'number', default: 50, describe: 'rows to list, newest first (the summary covers all)' })
        .option('format', { type: 'string', choices: ['table', 'markdown', 'csv', 'json', 'html'], default: 'table', describe: 'output format (html: a self-contained page with charts)' })
        .option('out', { type: 'string', describe: 'with --format html: the file to write (default forge-reflect-report.html; - for stdout)' })
        .option('json', { type: 'boolean', default: false, describe: 'same as --format json' }),
    examples: [
      ['$0 report --since 7d --needs-review', 'what needed review this week'],
      ['$0 report --format html --out report.html', 'the pictures: turns, surfaces, reliability diagram, tools; opens offline'],
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
  {
    command: 'bounce',
    describe: 'Record a review, test or feedback check for a task and decide: approve, bounce (fix-mode brief) or escalate',
    builder: (y) =>
      y
        .option('task', { type: 'string', demandOption: true, describe: 'the task reference, e.g. acme#42' })
        .option('review', { type: 'string', describe: 'a review-result.v1 JSON file' })
        .option('tests', { type: 'string', describe: 'a test-result.v1 JSON file' })
        .option('feedback', { type: 'string', describe: 'a feedback.v1 JSON file' })
        .option('policy', { type: 'string', describe: 'a policy JSON file: {"max_bounces": {"review": 3, "testing": 2, "feedback": 3}}' })
        .option('now', { type: 'string', describe: 'the time to record (ISO-8601; default $FORGE_NOW, else the clock)' })
        .option('json', { type: 'boolean', default: false, describe: 'print the decision, items and brief as JSON' }),
    examples: [
      ['$0 bounce --task acme#42 --review review.json', 'decide on a review; prints the fix-mode brief on a bounce'],
      ['$0 bounce --task acme#42 --tests results.json --policy loop-policy.json --json', 'a test run, with a custom bounce limit'],
    ],
    load: async () => (await import('./bounce.js')).run,
  },
  {
    command: 'outcome',
    describe: 'Record what turned out true for a task (correct or wrong, and who says so)',
    builder: (y) =>
      y
        .option('task', { type: 'string', demandOption: true, describe: 'the task reference, e.g. acme#42' })
        .option('correct', { type: 'boolean', describe: 'the work was right' })
        .option('wrong', { type: 'boolean', describe: 'the work was wrong' })
        .option('source', { type: 'string', choices: ['ci', 'human', 'revert', 'production'], default: 'human', describe: 'who says so' })
        .option('at', { type: 'string', describe: 'when it became known (ISO-8601 or an age like 2h; default now)' })
        .option('note', { type: 'string', describe: 'a short note' })
        .option('now', { type: 'string', describe: 'the current time (ISO-8601; default $FORGE_NOW, else the clock)' })
        .option('json', { type: 'boolean', default: false, describe: 'print the recorded outcome as JSON' }),
    examples: [
      ['$0 outcome --task acme#42 --wrong --source revert --note "reverted in #57"', 'the change was reverted'],
      ['$0 outcome --task acme#42 --correct --source ci --json', 'CI passed on main'],
    ],
    load: async () => (await import('./outcome.js')).run,
  },
  {
    command: 'learn <action> [target]',
    describe: 'Learned patterns: add, list, search, dismiss, confirm, applied, rewritten, decay, prune',
    builder: (y) =>
      y
        .positional('action', { type: 'string', choices: ['add', 'list', 'search', 'dismiss', 'confirm', 'applied', 'rewritten', 'decay', 'prune'], describe: 'what to do' })
        .positional('target', { type: 'string', describe: 'a learning id (dismiss, confirm, applied, rewritten) or search text' })
        .option('type', { type: 'string', choices: ['episodic', 'semantic', 'procedural'], describe: 'add: the kind of learning (default semantic)' })
        .option('content', { type: 'string', describe: 'add: the insight' })
        .option('context', { type: 'string', describe: 'add: when it is relevant' })
        .option('tags', { type: 'string', array: true, describe: 'add: tags (comma-separated or repeated)' })
        .option('source', { type: 'string', choices: ['machine', 'human', 'production'], describe: 'add: where it came from; starts at 0.5, 0.7 or 0.9' })
        .option('tag', { type: 'string', describe: 'list/search: only learnings with this tag' })
        .option('all', { type: 'boolean', default: false, describe: 'list/search: include archived learnings' })
        .option('reason', { type: 'string', describe: 'dismiss: why' })
        .option('human', { type: 'string', describe: "rewritten: the human's version" })
        .option('now', { type: 'string', describe: 'the current time (ISO-8601; default $FORGE_NOW, else the clock)' })
        .option('json', { type: 'boolean', default: false, describe: 'print the result as JSON' }),
    examples: [
      ['$0 learn add --type procedural --content "add clearAllMocks() in beforeEach" --context "mock tests fail" --tags testing,mocks', 'keep a pattern (0.5)'],
      ['$0 learn search "null check" --tag auth', 'find patterns by text and tag'],
      ['$0 learn dismiss 3 --reason "not our convention"', 'lower #3 by 0.2 and keep the dismissal'],
      ['$0 learn decay && $0 learn prune', 'weekly upkeep: decay unused patterns, archive weak ones'],
    ],
    load: async () => (await import('./learn.js')).run,
  },
  {
    command: 'metrics [action]',
    describe: 'Feedback-loop metrics for the last 7, 30 or 90 days; `metrics snapshot` stores them, --trend compares',
    builder: (y) =>
      y
        .positional('action', { type: 'string', choices: ['snapshot'], describe: 'snapshot: store the current metrics' })
        .option('days', { type: 'number', choices: [7, 30, 90], default: 7, describe: 'the window' })
        .option('trend', { type: 'boolean', default: false, describe: 'show the last snapshots side by side' })
        .option('now', { type: 'string', describe: 'the end of the window (ISO-8601; default $FORGE_NOW, else the clock)' })
        .option('json', { type: 'boolean', default: false, describe: 'print the metrics as JSON (null where there is no data)' }),
    examples: [
      ['$0 metrics --days 30', 'the last 30 days; formulas in docs/metrics.md'],
      ['$0 metrics snapshot && $0 metrics --trend', 'store today and compare with earlier snapshots'],
    ],
    load: async () => (await import('./metrics.js')).run,
  },
  {
    command: 'analyze <kind>',
    describe: 'Phase-0 analyses: calibration (P1), git-history (P2), board-history (P3), with pre-registered kill conditions',
    builder: (y) =>
      y
        .positional('kind', { type: 'string', choices: ['calibration', 'git-history', 'board-history'], describe: 'which analysis' })
        .option('corpus', { type: 'string', describe: 'calibration: JSONL of {confidence, correct} (- for stdin)' })
        .option('high', { type: 'string', describe: 'calibration: the self-rated-high subset is confidence >= this (default 0.7)' })
        .option('chance', { type: 'string', describe: 'calibration: the AUC of chance (default 0.5)' })
        .option('margin', { type: 'string', describe: 'calibration: the band around chance (default 0.05)' })
        .option('min-per-class', { type: 'string', describe: 'calibration: fewer correct or wrong rows than this is inconclusive (default 10)' })
        .option('bootstrap', { type: 'string', describe: 'calibration: bootstrap replicates (default 2000; 0 skips)' })
        .option('seed', { type: 'string', describe: 'calibration: bootstrap seed; git-history: sample seed (default 0)' })
        .option('repo', { type: 'string', describe: 'git-history: the repository (default .)' })
        .option('since', { type: 'string', describe: 'git-history: signals from this date (2025-01-01, 90d, "6 months ago")' })
        .option('window', { type: 'string', describe: 'how long after a change a signal counts (default 14d for git-history, 30d for board-history)' })
        .option('sample', { type: 'string', describe: 'git-history: write a labelling sheet of N signals (stratified by bucket, seeded) to --out' })
        .option('labels', { type: 'string', describe: 'git-history: a filled labelling sheet; reports agreement and the labelled verdict' })
        .option('repo-name', { type: 'string', describe: "git-history: the repository's name, removed from paths before the risk-floor match (default: origin's URL, else the folder)" })
        .option('board', { type: 'string', array: true, describe: 'board-history: a task export (JSON/JSONL, GitHub Issues JSON); repeatable' })
        .option('data-dir', { type: 'string', array: true, describe: 'board-history: a folder of task files kept in git; repeatable' })
        .option('format', { type: 'string', default: 'json', describe: 'json or markdown (calibration also html: the reliability diagram)' })
        .option('out', { type: 'string', describe: 'with --format html: the file to write (default forge-reflect-report.html; - for stdout); git-history --sample: the sheet' }),
    examples: [
      ['$0 analyze calibration --corpus corpus.jsonl --high 0.7 --bootstrap 2000 --seed 1', 'P1: does confidence rank outcomes?'],
      ['$0 analyze calibration --corpus corpus.jsonl --format html --out p1.html', 'P1 as a reliability diagram'],
      ['$0 analyze git-history --repo . --since 2025-01-01 --window 14d --format markdown', 'P2: which gate would catch each failure'],
      ['$0 analyze git-history --repo . --sample 50 --seed 1 --out sheet.jsonl', 'P2: a labelling sheet; then --labels sheet.jsonl for agreement'],
      ['$0 analyze board-history --board issues.json --window 30d', 'P3: how often is an outcome detectable'],
    ],
    load: async () => (await import('./analyze.js')).run,
  },
  {
    command: 'corpus',
    describe: "Join sidecars' self-reported confidence with recorded outcomes into the P1 corpus (JSONL)",
    builder: (y) =>
      y
        .option('dir', { type: 'string', array: true, describe: 'sidecar folder; repeatable (default as for report)' })
        .option('out', { type: 'string', describe: 'write the JSONL here (default stdout)' }),
    examples: [['$0 corpus --out corpus.jsonl && $0 analyze calibration --corpus corpus.jsonl', 'from agent sessions to a calibration verdict']],
    load: async () => (await import('./corpus.js')).run,
  },
  {
    command: 'export',
    describe: 'Send new sidecars, events and turns to an OpenTelemetry collector (OTLP/HTTP), each record once',
    builder: (y) =>
      y
        .option('endpoint', { type: 'string', describe: 'OTLP/HTTP base URL; /v1/logs and /v1/traces are appended (default $OTEL_EXPORTER_OTLP_ENDPOINT, else export.endpoint in .forge/config.json)' })
        .option('protocol', { type: 'string', describe: 'http/protobuf or http/json (default $OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf)' })
        .option('since', { type: 'string', describe: 'only records at or after this time (ISO-8601, or 30m, 2h, 7d)' })
        .option('dir', { type: 'string', array: true, describe: 'sidecar folder; repeatable (default as for report)' })
        .option('timeout', { type: 'string', describe: 'time budget in seconds for the whole export, retries included (default 30)' })
        .option('batch-size', { type: 'string', describe: 'records per request (default 500)' })
        .option('dry-run', { type: 'boolean', default: false, describe: 'count what would be sent; send and mark nothing' })
        .option('json', { type: 'boolean', default: false, describe: 'print the counts as JSON' }),
    examples: [
      ['$0 export --endpoint http://127.0.0.1:4318', 'send everything new to a local collector (protobuf)'],
      ['OTEL_EXPORTER_OTLP_ENDPOINT=https://otel.example.com OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20xyz $0 export --json', 'the standard variables, counts as JSON'],
      ['$0 export --dry-run --since 7d', 'what the last week would send'],
    ],
    load: async () => (await import('./export.js')).run,
  },
];
