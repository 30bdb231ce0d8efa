/**
 * Agreement with people: a seeded, bucket-stratified sample of P2's signals written as a labelling
 * sheet (JSON Lines), and the filled sheet read back into per-bucket precision (Wilson intervals),
 * Cohen's kappa, the share of non-failures, how often the blamed cause is the introducing commit,
 * and the only-self-reflection share estimated from the labels. Pure; the IO is in analyze.ts.
 */
import { cohenKappa, wilson, type Proportion } from './agreement.js';
import { GATES, type Gate } from './gates.js';
import { shareVerdict, type GitHistoryReport, type Signal } from './git-history.js';
import { mulberry32, randomIndex } from './prng.js';

export const SHEET_VERSION = 'forge-reflect.p2-sheet.v1';

export interface SheetHeader {
  sheet: typeof SHEET_VERSION;
  repo: string;
  since: string;
  window_days: number;
  seed: number;
  sample: number;
  /** Counted signals per bucket when the sheet was drawn (the strata's sizes, for weights). */
  population: Record<Gate, number>;
  instructions: string;
}

export interface HumanLabel {
  /** Is it a real failure (a defect or a change that had to be undone)? null = not labelled yet. */
  failure: boolean | null;
  /** The gate that would have caught the introducing change, in your judgement. */
  gate: Gate | null;
  /**
   * The sha (7–40 hex) of the commit that introduced the defect; "other" when it is none of the blamed
   * causes but could not be named; "none" when no earlier commit did; "unknown" when you cannot tell.
   */
  cause: string | null;
  note: string;
}

export interface PatchInfo {
  files: Array<{ path: string; added: number; deleted: number }>;
  hunks: string;
}

export interface SheetRow {
  id: string;
  kind: Signal['kind'];
  bucket: Gate;
  rule: string;
  delay_days: number | null;
  capped: boolean;
  fix: { sha: string; subject: string; at: string; stats: PatchInfo['files']; hunks: string };
  causes: Array<{ sha: string; subject: string; at: string; type: string; lines: number | null; stats: PatchInfo['files']; hunks: string }>;
  human: HumanLabel;
}

export const LABEL_INSTRUCTIONS =
  'Fill human.failure (true: the fix repairs a defect, or the revert undoes a change that was wrong; false: a dependency bump, a feature or refactor called fix, a revert that only moves work), ' +
  'human.cause (the sha of the commit that introduced the defect, read from the fix and the blamed causes; "other" if it is none of them but you cannot name it; "none" if no earlier commit did; "unknown"), ' +
  'and human.gate (ci if a test in the fix or a failing check shows CI could catch it, human_review if the introducing change touched a surface that needs review, else self_reflection). Leave null to skip.';

/** Draws up to n signals, equal shares per bucket (a short bucket's remainder goes to the others), seeded. */
export function sampleSignals(signals: readonly Signal[], n: number, seed: number): Signal[] {
  const random = mulberry32(seed);
  const pools = GATES.map((g) => {
    const pool = signals.filter((s) => s.gate === g);
    for (let i = pool.length - 1; i > 0; i--) {
      const j = randomIndex(random, i + 1);
      [pool[i], pool[j]] = [pool[j] as Signal, pool[i] as Signal];
    }
    return pool;
  });
  const take = GATES.map(() => 0);
  let left = Math.min(n, signals.length);
  while (left > 0) {
    const open = GATES.map((_, i) => i).filter((i) => (take[i] as number) < (pools[i] as Signal[]).length);
    if (open.length === 0) break;
    for (const i of open) {
      if (left === 0) break;
      take[i] = (take[i] as number) + 1;
      left--;
    }
  }
  return pools.flatMap((p, i) => p.slice(0, take[i]));
}

export function sheetRow(s: Signal, patches: ReadonlyMap<string, PatchInfo>): SheetRow {
  const empty: PatchInfo = { files: [], hunks: '' };
  const fix = patches.get(s.sha) ?? empty;
  return {
    id: s.sha,
    kind: s.kind,
    bucket: s.gate,
    rule: s.rule,
    delay_days: s.delay_days,
    capped: s.capped,
    fix: { sha: s.sha, subject: s.subject, at: s.at, stats: fix.files, hunks: fix.hunks },
    causes: s.causes.map((c) => {
      const p = patches.get(c.sha) ?? empty;
      return { ...c, stats: p.files, hunks: p.hunks };
    }),
    human: { failure: null, gate: null, cause: null, note: '' },
  };
}

export function sheetHeader(report: GitHistoryReport, repo: string, since: string, windowDays: number, seed: number, sample: number): SheetHeader {
  return {
    sheet: SHEET_VERSION,
    repo,
    since,
    window_days: windowDays,
    seed,
    sample,
    population: Object.fromEntries(GATES.map((g) => [g, report.buckets[g].count])) as Record<Gate, number>,
    instructions: LABEL_INSTRUCTIONS,
  };
}

export interface LabelledRow {
  id: string;
  bucket: Gate;
  fixes: string | null;
  candidates: string[];
  human: HumanLabel;
}

/** The first thing wrong with a labels file, as one line, or the rows. */
export function parseLabels(text: string, report: GitHistoryReport): { header: SheetHeader; rows: LabelledRow[] } | { error: string } {
  const lines = text
    .split('\n')
    .map((l, i) => ({ l: l.trim(), n: i + 1 }))
    .filter((x) => x.l !== '');
  const bad = (n: number, why: string) => ({
    error: `labels line ${n}: ${why}; pass the sheet --out wrote for this repository and window, with only the human fields changed`,
  });
  const first = lines[0];
  if (!first) return { error: 'the labels file is empty; pass the sheet --sample N --out wrote, with human fields filled' };
  let header: SheetHeader;
  try {
    header = JSON.parse(first.l) as SheetHeader;
  } catch {
    return bad(first.n, 'not JSON');
  }
  if (header?.sheet !== SHEET_VERSION || typeof header.population !== 'object' || header.population === null)
    return bad(first.n, `not a ${SHEET_VERSION} header`);
  for (const g of GATES)
    if (!Number.isInteger(header.population[g]) || (header.population[g] as number) < 0) return bad(first.n, `population.${g} is not a count`);
  const bySha = new Map(report.list.map((s) => [s.sha, s]));
  const rows: LabelledRow[] = [];
  const seen = new Set<string>();
  for (const { l, n } of lines.slice(1)) {
    let row: Partial<SheetRow>;
    try {
      row = JSON.parse(l) as Partial<SheetRow>;
    } catch {
      return bad(n, 'not JSON');
    }
    if (typeof row !== 'object' || row === null || typeof row.id !== 'string') return bad(n, 'no "id"');
    const signal = bySha.get(row.id);
    if (!signal) return bad(n, `unknown signal ${row.id.slice(0, 12)} (not a counted signal of this analysis)`);
    if (seen.has(row.id)) return bad(n, `signal ${row.id.slice(0, 12)} appears twice`);
    seen.add(row.id);
    if (row.bucket !== signal.gate) return bad(n, `bucket ${JSON.stringify(row.bucket)} but the heuristic now says ${signal.gate}`);
    const h = row.human as Partial<HumanLabel> | undefined;
    if (typeof h !== 'object' || h === null) return bad(n, 'no "human" object');
    if (h.failure !== null && typeof h.failure !== 'boolean') return bad(n, `human.failure ${JSON.stringify(h.failure)} is not true, false or null`);
    if (h.gate !== null && h.gate !== undefined && !GATES.includes(h.gate))
      return bad(n, `human.gate ${JSON.stringify(h.gate)} is not ${GATES.join(', ')} or null`);
    const cause = h.cause ?? null;
    if (cause !== null && !(typeof cause === 'string' && (/^[0-9a-f]{7,40}$/.test(cause) || cause === 'other' || cause === 'none' || cause === 'unknown'))) {
      return bad(n, `human.cause ${JSON.stringify(cause)} is not a 7-40 hex sha, "other", "none", "unknown" or null`);
    }
    if (h.failure === true && (h.gate === null || h.gate === undefined))
      return bad(n, 'human.failure is true but human.gate is null; name the gate (or set failure to null to skip the row)');
    rows.push({
      id: row.id,
      bucket: signal.gate,
      fixes: signal.fixes,
      candidates: signal.candidates,
      human: { failure: h.failure ?? null, gate: h.gate ?? null, cause, note: typeof h.note === 'string' ? h.note : '' },
    });
  }
  if (rows.length === 0) return { error: 'the labels file has a header but no rows; pass the sheet --sample N --out wrote' };
  return { header, rows };
}

export interface LabelStats {
  rows: number;
  labelled: number;
  failures: number;
  non_failure: Proportion;
  per_bucket: Record<Gate, { labelled: number; failures: number; agree: number; precision: Proportion }>;
  kappa: ReturnType<typeof cohenKappa>;
  cause: { named: number; primary: Proportion; any: Proportion; none: number };
  /** Only-self-reflection share among real failures, weighted by the strata's sizes; n is Kish's effective size. */
  self_share: Proportion;
}

const matches = (a: string, b: string) => a.startsWith(b) || b.startsWith(a);

/**
 * A weighted share of `rows` for which `hit` holds: the share, the weighted hits, and the effective
 * sample size (Kish: (sum w)^2 / sum w^2) that its Wilson interval is computed on.
 */
function weightedShare(rows: readonly LabelledRow[], weight: (g: Gate) => number, hit: (r: LabelledRow) => boolean): { p: number; hits: number; nEff: number } {
  let sum = 0;
  let sumSquares = 0;
  let hits = 0;
  for (const r of rows) {
    const w = weight(r.bucket);
    sum += w;
    sumSquares += w * w;
    if (hit(r)) hits += w;
  }
  return { p: sum === 0 ? 0 : hits / sum, hits, nEff: sumSquares === 0 ? 0 : (sum * sum) / sumSquares };
}

export function labelStats(rows: readonly LabelledRow[], population: Record<Gate, number>): LabelStats {
  const labelled = rows.filter((r) => r.human.failure !== null);
  const failures = labelled.filter((r) => r.human.failure === true);
  const perBucket = Object.fromEntries(
    GATES.map((g) => {
      const inB = labelled.filter((r) => r.bucket === g);
      const f = inB.filter((r) => r.human.failure === true);
      const agree = f.filter((r) => r.human.gate === g).length;
      return [g, { labelled: inB.length, failures: f.length, agree, precision: wilson(agree, f.length) }];
    }),
  ) as LabelStats['per_bucket'];
  // Judged rows: a named sha, or "other" (none of the blamed causes); "none"/"unknown" are not judged.
  const named = failures.filter((r) => r.human.cause !== null && (/^[0-9a-f]+$/.test(r.human.cause) || r.human.cause === 'other'));
  const isSha = (r: LabelledRow) => r.human.cause !== 'other';
  const primary = named.filter((r) => isSha(r) && r.fixes !== null && matches(r.fixes, r.human.cause as string)).length;
  const any = named.filter(
    (r) => isSha(r) && (r.candidates.some((c) => matches(c, r.human.cause as string)) || (r.fixes !== null && matches(r.fixes, r.human.cause as string))),
  ).length;
  // Stratified estimate: each labelled row stands for population / labelled rows of its bucket.
  const weight = (g: Gate) => (perBucket[g].labelled === 0 ? 0 : population[g] / perBucket[g].labelled);
  const selfShare = weightedShare(failures, weight, (r) => r.human.gate === 'self_reflection');
  const self = wilson(selfShare.p * selfShare.nEff, selfShare.nEff);
  const nonFailure = weightedShare(labelled, weight, (r) => r.human.failure === false);
  return {
    rows: rows.length,
    labelled: labelled.length,
    failures: failures.length,
    non_failure: wilson(nonFailure.p * nonFailure.nEff, nonFailure.nEff),
    per_bucket: perBucket,
    kappa: cohenKappa(failures.map((r) => [r.bucket, r.human.gate as string] as const)),
    cause: {
      named: named.length,
      primary: wilson(primary, named.length),
      any: wilson(any, named.length),
      none: failures.filter((r) => r.human.cause === 'none').length,
    },
    self_share: { ...self, k: Math.round(selfShare.hits * 1000) / 1000 },
  };
}

/** The report with the labels' evidence: the verdict now rests on the labelled estimate. */
export function withLabels(
  report: GitHistoryReport,
  stats: LabelStats,
): GitHistoryReport & { labels: LabelStats; heuristic_verdict: { verdict: string; reason: string } } {
  const heuristic = { verdict: report.verdict, reason: report.reason };
  let verdict = report.verdict;
  let reason: string;
  // A clone too shallow for the window (the verdict's reason is then the depth note) stays inconclusive.
  if (report.reason === report.blame.depth) reason = report.reason;
  else if (stats.failures === 0) [verdict, reason] = ['INCONCLUSIVE', `none of the ${stats.labelled} labelled signals is a real failure`];
  else
    [verdict, reason] = shareVerdict(
      stats.self_share,
      `an estimated share of real failures (${stats.failures} labelled)`,
      'from the labels (weighted by bucket)',
    );
  return { ...report, verdict, reason, evidence: 'labels', labels: stats, heuristic_verdict: heuristic };
}

export function renderLabelsMarkdown(stats: LabelStats): string {
  const f = (p: Proportion) =>
    p.p === null || !p.ci ? 'n/a' : `${(p.p * 100).toFixed(1)}% (95% CI ${(p.ci[0] * 100).toFixed(1)}–${(p.ci[1] * 100).toFixed(1)}%)`;
  const lines = [
    '## Agreement with the labels',
    '',
    `Rows ${stats.rows}, labelled ${stats.labelled}, real failures ${stats.failures}. Non-failures (weighted): ${f(stats.non_failure)}.`,
    `Cohen's kappa, heuristic bucket vs human gate over real failures: ${stats.kappa.kappa === null ? 'n/a' : stats.kappa.kappa.toFixed(3)} (n ${stats.kappa.n}, observed agreement ${stats.kappa.observed === null ? 'n/a' : (stats.kappa.observed * 100).toFixed(1) + '%'}).`,
    `Blamed cause is the introducing commit: primary ${f(stats.cause.primary)}, any candidate ${f(stats.cause.any)} (of ${stats.cause.named} real failures whose cause was judged; ${stats.cause.none} with none in the history).`,
    `Only-self-reflection share from the labels: ${f(stats.self_share)}.`,
    '',
    '| bucket | labelled | real failures | human agrees | precision |',
    '|---|---|---|---|---|',
    ...GATES.map(
      (g) =>
        `| ${g} | ${stats.per_bucket[g].labelled} | ${stats.per_bucket[g].failures} | ${stats.per_bucket[g].agree} | ${f(stats.per_bucket[g].precision)} |`,
    ),
    '',
  ];
  return `${lines.join('\n')}\n`;
}
