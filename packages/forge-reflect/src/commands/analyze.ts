/**
 * `forge-reflect analyze calibration|git-history|board-history`: the Phase-0 analyses (P1, P2, P3).
 * The math and parsing live in ../analysis/; this module reads the inputs, checks the flags and
 * prints the report (JSON by default, or markdown) on stdout.
 */
import { readFileSync } from 'node:fs';
import { UserError, usageError } from '../errors.js';
import { writeJson } from '../output.js';
import { writeAtomic } from '../atomic-write.js';
import { parseSince } from '../since.js';
import { analyzeBoard, readBoard, renderBoardMarkdown, type BoardData } from '../analysis/board.js';
import { readDataDir } from '../analysis/board-git.js';
import { calibrationReport, renderCalibrationMarkdown } from '../analysis/calibration-report.js';
import { parseCorpus } from '../analysis/corpus-rows.js';
import { parseDuration, parseGitAgo, WINDOW_EXAMPLE } from '../analysis/duration.js';
import { analyzeGitHistory, renderGitHistoryMarkdown, type GitHistoryReport } from '../analysis/git-history.js';
import { labelStats, parseLabels, renderLabelsMarkdown, sampleSignals, sheetHeader, sheetRow, withLabels, type LabelStats } from '../analysis/labels.js';
import { collectEvidence, readPatches, readShallow } from '../analysis/szz-run.js';
import { readGitLog } from '../analysis/git-log.js';
import { DEFAULT_RULES } from '../analysis/verdict.js';
import { statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { basename, dirname, resolve } from 'node:path';

export const ANALYSES = ['calibration', 'git-history', 'board-history'] as const;
export const GIT_SINCE_EXAMPLE = '--since 2025-01-01, --since 2025-01-01T00:00:00Z, --since 90d or --since "6 months ago"';

function readInput(path: string): string {
  try {
    return readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new UserError(`cannot read ${path === '-' ? 'stdin' : path} (${code}); pass a readable file`);
  }
}

function fraction(flag: string, value: unknown, fallback: number, example: string): number {
  if (value === undefined) return fallback;
  const text = String(value).trim();
  const n = Number(text);
  if (text === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw usageError(`--${flag} ${JSON.stringify(String(value))} is not a number from 0 to 1; e.g. --${flag} ${example}`);
  return n;
}

function whole(flag: string, value: unknown, fallback: number, max: number, example: string): number {
  if (value === undefined) return fallback;
  const text = String(value).trim();
  if (!/^\d+$/.test(text) || Number(text) > max)
    throw usageError(`--${flag} ${JSON.stringify(String(value))} is not a whole number from 0 to ${max}; e.g. --${flag} ${example}`);
  return Number(text);
}

function windowOf(value: unknown, fallback: string): number {
  const text = value === undefined ? fallback : String(value);
  const ms = parseDuration(text);
  if (ms === undefined) throw usageError(`--window ${JSON.stringify(text)} is not a duration; use ${WINDOW_EXAMPLE}`);
  return ms;
}

function formatOf(args: Record<string, unknown>, html: boolean): 'json' | 'markdown' | 'html' {
  const f = String(args.format ?? 'json');
  if (f === 'json' || f === 'markdown' || (html && f === 'html')) return f;
  throw usageError(`--format ${JSON.stringify(f)} is not known; use --format json or --format markdown${html ? ' (or html for calibration)' : ''}`);
}

/** An instant git can be given, from ISO, an age (90d) or git's "N units ago"; undefined when unreadable. */
export function gitSince(text: string, now = Date.now()): number | undefined {
  const iso = parseSince(text, now);
  if (iso !== undefined) return Date.parse(iso);
  return parseGitAgo(text, now);
}

async function calibration(args: Record<string, unknown>, format: 'json' | 'markdown' | 'html'): Promise<number> {
  if (args.corpus === undefined) throw usageError('analyze calibration needs --corpus FILE.jsonl (or - for stdin)');
  const options = {
    high: fraction('high', args.high, 0.7, '0.7'),
    chance: fraction('chance', args.chance, DEFAULT_RULES.chance, '0.5'),
    margin: fraction('margin', args.margin, DEFAULT_RULES.margin, '0.05'),
    minPerClass: whole('min-per-class', args.minPerClass, DEFAULT_RULES.minPerClass, 1_000_000, '10'),
    maxTiedShare: DEFAULT_RULES.maxTiedShare,
    bootstrap: whole('bootstrap', args.bootstrap, 2000, 1_000_000, '2000'),
    seed: whole('seed', args.seed, 0, 4_294_967_295, '42'),
  };
  const parsed = parseCorpus(readInput(String(args.corpus)));
  if (parsed.bad.length > 0) process.stderr.write(`skipped ${parsed.bad.length} bad row(s); first at line ${parsed.bad[0]?.line}: ${parsed.bad[0]?.reason}\n`);
  if (format === 'html') {
    // The charting libraries load here only.
    const { writeCalibrationHtml } = await import('../report/html/calibration-html.js');
    await writeCalibrationHtml(parsed.rows, options, String(args.corpus), args.out);
    return 0;
  }
  const report = calibrationReport(parsed.rows, parsed.bad, options);
  if (format === 'json') writeJson(report);
  else process.stdout.write(renderCalibrationMarkdown(report));
  return 0;
}

/** The repository's own name: --repo-name, else origin's URL, else the folder's (a mirror's `owner+name/repo`: name). */
export function repoNameOf(repo: string, origin: string | null, given: unknown): string | null {
  if (given !== undefined && String(given).trim() !== '') return String(given).trim();
  const strip = (s: string) => s.replace(/\/+$/, '').replace(/\.git$/i, '');
  if (origin) return basename(strip(origin).replace(/^.*:/, '/')) || null;
  const abs = resolve(repo);
  let name = basename(strip(abs));
  if (name === '' || name === 'repo' || name === '.git') name = basename(dirname(abs));
  return name.split('+').pop() || null;
}

function originUrl(repo: string): string | null {
  const r = spawnSync('git', ['-C', repo, 'config', '--get', 'remote.origin.url'], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : null;
}

async function gitHistory(args: Record<string, unknown>, format: 'json' | 'markdown'): Promise<number> {
  const repo = String(args.repo ?? '.');
  const windowMs = windowOf(args.window, '14d');
  let since = 0;
  if (args.since !== undefined) {
    const parsed = gitSince(String(args.since));
    if (parsed === undefined) throw usageError(`--since ${JSON.stringify(String(args.since))} is not a date git can read; use ${GIT_SINCE_EXAMPLE}`);
    since = parsed;
  }
  const sample = args.sample === undefined ? undefined : whole('sample', args.sample, 0, 100_000, '50');
  const seed = whole('seed', args.seed, 0, 4_294_967_295, '1');
  if (sample !== undefined && (args.out === undefined || String(args.out) === ''))
    throw usageError('--sample needs --out FILE.jsonl (the labelling sheet); e.g. --sample 50 --seed 1 --out sheet.jsonl');
  if (sample !== undefined && args.labels !== undefined) throw usageError('--sample writes a sheet and --labels reads one; use one at a time');
  try {
    if (!statSync(repo).isDirectory()) throw new Error('ENOTDIR');
  } catch {
    throw new UserError(`cannot read the repository ${repo}; pass --repo a git repository folder`);
  }
  const from = args.since === undefined ? undefined : new Date(Math.max(0, since - windowMs)).toISOString();
  const commits = await readGitLog(from === undefined ? { repo } : { repo, since: from });
  const options = { since, windowMs, repoName: repoNameOf(repo, originUrl(repo), args.repoName), shallow: await readShallow(repo, commits) };
  const evidence = await collectEvidence(repo, commits, options, from);
  let report: GitHistoryReport & { labels?: LabelStats } = analyzeGitHistory(commits, options, evidence);
  const meta = { repo, repo_name: options.repoName, since: new Date(since).toISOString(), window_days: windowMs / 86_400_000 };
  if (sample !== undefined) {
    const picked = sampleSignals(report.list, sample, seed);
    const patches = await readPatches(
      repo,
      picked.flatMap((s) => [s.sha, ...s.causes.slice(0, 3).map((c) => c.sha)]),
    );
    const header = sheetHeader(report, repo, meta.since, meta.window_days, seed, sample);
    const text = [header, ...picked.map((s) => sheetRow(s, patches))].map((x) => JSON.stringify(x)).join('\n');
    const out = String(args.out);
    if (out === '-') process.stdout.write(`${text}\n`);
    else {
      try {
        writeAtomic(out, `${text}\n`, 0o644);
      } catch (error) {
        throw new UserError(`cannot write the sheet ${out} (${(error as NodeJS.ErrnoException).code ?? String(error)}); pass --out a writable file path`);
      }
      process.stderr.write(`wrote a labelling sheet of ${picked.length} signal(s) to ${out}; fill the human fields, then run with --labels ${out}\n`);
    }
    if (out === '-') return 0;
  }
  if (args.labels !== undefined) {
    const parsed = parseLabels(readInput(String(args.labels)), report);
    if ('error' in parsed) throw new UserError(parsed.error);
    report = withLabels(report, labelStats(parsed.rows, parsed.header.population));
  }
  // JSON goes to programs; a person running it should still hear that no author date could be used
  // (markdown carries the same note in its Dates: line).
  if (format === 'json' && report.dates.by === 'committer') process.stderr.write(`forge-reflect analyze git-history: ${report.dates.note}\n`);
  if (format === 'json') writeJson({ ...report, ...meta });
  else process.stdout.write(renderGitHistoryMarkdown(report) + (report.labels ? renderLabelsMarkdown(report.labels) : ''));
  return 0;
}

async function boardHistory(args: Record<string, unknown>, format: 'json' | 'markdown'): Promise<number> {
  const boards = ((args.board as unknown[] | undefined) ?? []).map(String);
  const dataDirs = ((args.dataDir as unknown[] | undefined) ?? []).map(String);
  if (boards.length === 0 && dataDirs.length === 0) throw usageError('analyze board-history needs --board FILE or --data-dir DIR');
  const windowMs = windowOf(args.window, '30d');
  const data: BoardData = { tasks: [], events: [], open: 0, bad: [], shapes: {} };
  for (const file of boards) {
    const before = data.bad.length;
    readBoard(readInput(file), data);
    for (const b of data.bad.slice(before)) b.reason = `${file}: ${b.reason}`;
  }
  for (const dir of dataDirs) {
    try {
      if (!statSync(dir).isDirectory()) throw new Error('ENOTDIR');
    } catch {
      throw new UserError(`cannot read the folder ${dir}; pass --data-dir a folder of task files inside a git repository`);
    }
    await readDataDir(dir, data);
  }
  const report = analyzeBoard(data, windowMs);
  if (format === 'json') writeJson(report);
  else process.stdout.write(renderBoardMarkdown(report));
  return 0;
}

export async function run(args: Record<string, unknown>): Promise<number> {
  const kind = String(args.kind);
  const format = formatOf(args, kind === 'calibration');
  if (kind === 'calibration') return calibration(args, format);
  if (format === 'html') throw usageError('--format html is only for analyze calibration');
  if (kind === 'git-history') return gitHistory(args, format);
  if (kind === 'board-history') return boardHistory(args, format);
  throw usageError(`unknown analysis ${JSON.stringify(kind)}; use one of ${ANALYSES.join(', ')}`);
}
