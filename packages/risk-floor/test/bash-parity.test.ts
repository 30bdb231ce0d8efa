/**
 * The generated bash twin (hooks/lib/risk-table.sh) must give the same verdict as
 * evaluateRiskFloor, byte for byte, for any path: surface, score, needs_review and reason.
 * One bash process per batch; records cross the pipe NUL-separated.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_THRESHOLD, REASON_FILE_LIMIT, RISK_TABLE, THRESHOLD_TEXT_PATTERN, evaluateRiskFloor, parseThresholdText } from '@forge-reflect/risk-floor';
import { mulberry32, pick } from '../../../tests/support/random.js';

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RISK_TABLE_SH = join(REPO_ROOT, 'hooks', 'lib', 'risk-table.sh');

/**
 * The bash the hooks run with, and its PATH: the system's, or in the stock-Mac pass of
 * scripts/test-shell.mjs the stand-in's bash 3.2 with the stand-in's bin/ alone on PATH.
 */
function hookBash(env: NodeJS.ProcessEnv): { bash: string; env: NodeJS.ProcessEnv } {
  if (process.env.FORGE_TEST_PLATFORM !== 'macos-like') return { bash: 'bash', env };
  const bin = process.env.FORGE_TEST_MACOS_BIN;
  if (!bin || !existsSync(join(bin, 'bash')))
    throw new Error('FORGE_TEST_PLATFORM=macos-like without FORGE_TEST_MACOS_BIN: run node scripts/test-shell.mjs --platform macos-like');
  return { bash: join(bin, 'bash'), env: { ...env, PATH: bin, OSTYPE: 'darwin23' } };
}

function randomCase(text: string, rand: () => number): string {
  return [...text].map((c) => (rand() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('');
}

// ---------------------------------------------------------------------------------------------
// The bash side
// ---------------------------------------------------------------------------------------------

interface Verdict {
  surface: string;
  score: string;
  needs_review: string;
  reason: string;
}

interface Case {
  thresholdText: string;
  files: string[];
}

/**
 * Reads records `threshold NUL count NUL file NUL ...` and answers, per record, either
 * `ok NUL surface NUL score NUL needs_review NUL reason NUL` or `bad NUL threshold-text-rejected`.
 */
const DRIVER = [
  'source "$1" || exit 97',
  "while IFS= read -r -d '' text && IFS= read -r -d '' count; do",
  '  files=()',
  '  for (( i = 0; i < count; i++ )); do',
  "    IFS= read -r -d '' f || exit 98",
  '    files+=("$f")',
  '  done',
  '  if forge_risk_threshold "$text"; then',
  '    forge_risk_evaluate "$FORGE_RISK_THRESHOLD" "${files[@]}"',
  '    printf \'ok\\0%s\\0%s\\0%s\\0%s\\0\' "$FORGE_RISK_SURFACE" "$FORGE_RISK_SCORE" "$FORGE_RISK_NEEDS_REVIEW" "$FORGE_RISK_REASON"',
  '  else',
  "    printf 'bad\\0'",
  '  fi',
  'done',
  "printf 'END\\0'",
].join('\n');

type BashAnswer = { kind: 'ok'; verdict: Verdict } | { kind: 'bad' };

function runBash(cases: readonly Case[], locale: string): BashAnswer[] {
  for (const c of cases) {
    for (const s of [c.thresholdText, ...c.files]) {
      if (s.includes('\0')) throw new Error('a NUL cannot cross into bash');
    }
  }
  const input = cases.map((c) => [c.thresholdText, String(c.files.length), ...c.files].map((s) => `${s}\0`).join('')).join('');
  const hook = hookBash({ ...process.env, LC_ALL: locale, LANG: locale });
  const result = spawnSync(hook.bash, ['-c', DRIVER, 'bash', RISK_TABLE_SH], {
    input: Buffer.from(input, 'utf8'),
    env: hook.env,
    maxBuffer: 256 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  const stderr = result.stderr.toString('utf8');
  if (result.status !== 0 || stderr !== '') {
    throw new Error(`bash driver failed (status ${String(result.status)}): ${stderr}`);
  }
  const fields = result.stdout.toString('utf8').split('\0');
  const answers: BashAnswer[] = [];
  let i = 0;
  while (fields[i] !== 'END') {
    const tag = fields[i++];
    if (tag === 'bad') {
      answers.push({ kind: 'bad' });
    } else if (tag === 'ok') {
      const [surface, score, needs_review, reason] = fields.slice(i, i + 4) as [string, string, string, string];
      answers.push({ kind: 'ok', verdict: { surface, score, needs_review, reason } });
      i += 4;
    } else {
      throw new Error(`unexpected driver output at field ${i - 1}: ${JSON.stringify(tag)}`);
    }
  }
  if (answers.length !== cases.length) throw new Error(`bash answered ${answers.length} of ${cases.length} records`);
  return answers;
}

function tsVerdict(c: Case): Verdict | undefined {
  const threshold = parseThresholdText(c.thresholdText);
  if (threshold === undefined) return undefined;
  const v = evaluateRiskFloor({ filesChanged: c.files }, { threshold });
  return { surface: v.surface, score: JSON.stringify(v.score), needs_review: String(v.needs_review), reason: v.reason };
}

/** Every case on which the two sides differ, described; empty when they agree everywhere. */
function disagreements(cases: readonly Case[], locale: string): string[] {
  const bash = runBash(cases, locale);
  const out: string[] = [];
  cases.forEach((c, n) => {
    const ts = tsVerdict(c);
    const b = bash[n];
    const bv = b?.kind === 'ok' ? b.verdict : undefined;
    if (JSON.stringify(ts) !== JSON.stringify(bv)) {
      out.push(`${JSON.stringify(c)}\n  ts:   ${JSON.stringify(ts)}\n  bash: ${JSON.stringify(bv)}`);
    }
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------------------------

/** A literal string that the pattern matches (regex syntax of the table removed). */
function literalOf(pattern: string): string {
  return pattern
    .replace(/\(\^\|\/\)/g, '')
    .replace(/\(\$\|\\\.\)/g, '')
    .replace(/[$^]/g, '')
    .replace(/\\(.)/g, '$1');
}

const ALL_PATTERNS = RISK_TABLE.flatMap((r) => r.patterns);
const FRAGMENTS = [...new Set(ALL_PATTERNS.map(literalOf))];
const UNICODE = ['é', 'É', '漢字', '🔥', '👩‍💻', 'İ', 'ı', '\u212A', 'ſ', 'ß', 'Ω', 'ǅ', '\u00A0', 'ﬁ', 'Å', '\u0301'];
const THRESHOLD_TEXTS = ['0', '0.5', '.85', '0.85', '0.850001', '1', '0.9', '0.6', '0.599999'];

function corpusOfPaths(): string[] {
  const paths = new Set<string>();
  const add = (p: string): void => {
    if (!p.includes('\0')) paths.add(p);
  };

  // Every pattern literally embedded, in several positions and spellings.
  for (const pattern of ALL_PATTERNS) {
    const lit = literalOf(pattern);
    add(lit);
    add(`src/${lit}`);
    add(`src/${lit}/index.ts`);
    add(`x${lit}y`);
    add(lit.toUpperCase());
    add(`./${lit}`);
    add(`.\\${lit.replace(/\//g, '\\')}`);
    add(`deep\\${lit}\\file`);
    add(`  ${lit} `);
    add(`é/${lit}/漢字.ts`);
  }

  // Hand-picked edges: anchors, segment starts, normalisation, near misses.
  for (const p of [
    '',
    '.',
    './',
    '/',
    '\\',
    '././',
    '.\\.\\',
    './/x',
    '../auth',
    'a/../b',
    '.env',
    '.ENV',
    '.Env.local',
    'config/.env.production',
    'x/.env.',
    '.envrc',
    'environment.ts',
    'x.env',
    'src/environment.ts',
    'C:\\repo\\Auth\\x.ts',
    './src/x',
    'Dockerfile',
    'docs/auth.md',
    'README.md',
    'a.pem',
    'a.pem.bak',
    'a.PEM',
    'a.key',
    'a.keys',
    'k.Key',
    '.\\.env',
    './.env',
    './/.env',
    'package-json',
    'package.json',
    'PACKAGE.JSON',
    'turbo-json',
    'a.config.ts',
    'config.ts',
    '.github/workflows/ci.yml',
    '.GITHUB\\WORKFLOWS\\ci.yml',
    'github/workflows/x',
    '.circleci/config.yml',
    'Jenkinsfile',
    'jenkins/file',
    'src/__tests__/x.ts',
    '__TESTS__/x',
    'x.spec.ts',
    'x.test.ts',
    'apps/web/index.html',
    'apps\\web\\x',
    'components/x.vue',
    'x.tsx',
    'x.css',
    'x.scss',
    'docs/x',
    'x.MD',
    'path with spaces/auth file.ts',
    ' leading',
    'trailing ',
    '\ttab\tauth',
    "quote\"s/'single'/`back`",
    '$HOME/auth',
    '$(rm -rf /)',
    '*',
    '[abc]',
    '?',
    '%s%d%n',
    '-n',
    '--',
    'a\\\\b',
    'a//b',
    'ſecret',
    'ſession',
    'to\u212Aen',
    'k8s',
    '\u212A8s',
    'LOGİN',
    'logın',
    'LOGIN',
    'Logın',
    'İ/auth',
    'ıaut h',
    'secreſt',
    'ſeed',
    'ﬁle.md',
    '漢字/auth.ts',
    '🔥.sql',
    '👩‍💻/Dockerfile',
    'é.tsx',
    'Å.css',
    // Anchors next to line breaks and control characters (git can report such names).
    // Agent configuration at any depth, and near misses.
    'sub/CLAUDE.md',
    'x/.Claude/settings.json',
    'a.claude/x',
    '.claudeignore',
    '.mcp.json.bak',
    'AGENTS.MD',
    'sub\\.codex\\hooks.json',
    'notgemini.md',
    '.cursorrules.bak',
    '.github/COPILOT-INSTRUCTIONS.md',
    'x/.github/copilot-instructions.md',
    'CLAUDE.md\n',
    'a\n.env',
    '.env\nx',
    'x.pem\n',
    '\nauth',
    'a\r.env',
    '.env\r',
    '\u0001\u007f/token',
    'x.key\t',
  ]) {
    add(p);
  }

  // Seeded random printable paths, with pattern fragments mixed in so many of them hit.
  const rand = mulberry32(0x7a11ed);
  for (let n = 0; n < 400; n++) {
    const parts: string[] = [];
    const length = 1 + Math.floor(rand() * 10);
    for (let k = 0; k < length; k++) {
      const r = rand();
      if (r < 0.3) parts.push(String.fromCharCode(0x20 + Math.floor(rand() * 95)));
      else if (r < 0.45) parts.push(pick(['/', '\\', '.', './', '.\\', '-', '_'], rand));
      else if (r < 0.6) parts.push(pick(UNICODE, rand));
      else if (r < 0.85) parts.push(randomCase(pick(FRAGMENTS, rand), rand));
      else parts.push(pick(['src', 'lib', 'app', 'x', 'index.ts', 'main.go', 'a b'], rand));
    }
    add(parts.join(''));
  }
  return [...paths];
}

function multiFileCases(paths: readonly string[]): Case[] {
  const rand = mulberry32(0xfeed5);
  const cases: Case[] = [];
  for (let n = 0; n < 250; n++) {
    const size = Math.floor(rand() * 12);
    const files = Array.from({ length: size }, () => pick(paths, rand));
    cases.push({ thresholdText: pick(THRESHOLD_TEXTS, rand), files });
  }
  // Many files on one surface, so `(+N more)` and the reset of tripped files get exercised.
  for (const rule of RISK_TABLE) {
    const lits = rule.patterns.map(literalOf);
    const files = Array.from({ length: 7 }, (_, i) => `d${i}/${lits[i % lits.length] ?? ''}`);
    cases.push({ thresholdText: pick(THRESHOLD_TEXTS, rand), files });
    cases.push({ thresholdText: '0.5', files: ['a.md', 'b.md', 'c.md', 'd.md', ...files, 'e.md'] });
  }
  cases.push({ thresholdText: '0', files: [] });
  cases.push({ thresholdText: '0', files: [''] });
  cases.push({ thresholdText: '1', files: ['', '', ''] });
  return cases;
}

const PATHS = corpusOfPaths();
/**
 * Each path under two thresholds, rotating through the list: the threshold only moves
 * needs_review and the reason's tail, and the corpus test checks every surface meets every one.
 */
const SINGLE_CASES: Case[] = PATHS.flatMap((p, n) =>
  [n, n + 4].map((k) => ({ thresholdText: THRESHOLD_TEXTS[k % THRESHOLD_TEXTS.length] ?? '0.5', files: [p] })),
);
const MULTI_CASES = multiFileCases(PATHS);
const ALL_CASES = [...SINGLE_CASES, ...MULTI_CASES];

// ---------------------------------------------------------------------------------------------

describe('bash twin parity (hooks/lib/risk-table.sh vs evaluateRiskFloor)', () => {
  it("runs in the hooks' bash: the stand-in's 3.2 in the stock-Mac pass, the system's otherwise", () => {
    const hook = hookBash(process.env);
    const version = spawnSync(hook.bash, ['-c', 'echo "$BASH_VERSION"'], { encoding: 'utf8', env: hook.env }).stdout.trim();
    if (process.env.FORGE_TEST_PLATFORM === 'macos-like') expect(version).toMatch(/^3\.2\./);
    else expect(version).toMatch(/^[4-9]\./);
  });

  it('has the generated twin, built from the current table', () => {
    expect(existsSync(RISK_TABLE_SH), `${RISK_TABLE_SH} is missing: run npm run build`).toBe(true);
    const script = [
      'source "$1" || exit 97',
      'printf \'%s\\0\' "$FORGE_RISK_DEFAULT_THRESHOLD" "$FORGE_RISK_REASON_FILE_LIMIT" "$FORGE_RISK_THRESHOLD_PATTERN"',
      'printf \'%s\\0\' "${#FORGE_RISK_SURFACES[@]}" "${FORGE_RISK_SURFACES[@]}"',
      'printf \'%s\\0\' "${#FORGE_RISK_WEIGHTS[@]}" "${FORGE_RISK_WEIGHTS[@]}"',
      'printf \'%s\\0\' "${#FORGE_RISK_REGEXES[@]}" "${FORGE_RISK_REGEXES[@]}"',
    ].join('\n');
    const hook = hookBash(process.env);
    const result = spawnSync(hook.bash, ['-c', script, 'bash', RISK_TABLE_SH], { encoding: 'utf8', env: hook.env });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const n = String(RISK_TABLE.length);
    expect(result.stdout.split('\0').slice(0, -1)).toEqual([
      JSON.stringify(DEFAULT_THRESHOLD),
      String(REASON_FILE_LIMIT),
      THRESHOLD_TEXT_PATTERN,
      n,
      ...RISK_TABLE.map((r) => r.surface),
      n,
      ...RISK_TABLE.map((r) => JSON.stringify(r.weight)),
      n,
      ...RISK_TABLE.map((r) => r.patterns.map((p) => `(${p.toLowerCase()})`).join('|')),
    ]);
  });

  it(`the corpus is big and varied: ≥300 paths, every pattern hit, every surface reached`, () => {
    expect(PATHS.length).toBeGreaterThanOrEqual(300);
    expect(MULTI_CASES.length).toBeGreaterThanOrEqual(250);
    for (const pattern of ALL_PATTERNS) {
      const re = new RegExp(pattern, 'i');
      expect(
        PATHS.some((p) => re.test(p.replace(/\\/g, '/'))),
        pattern,
      ).toBe(true);
    }
    const surfaces = new Set(PATHS.map((p) => evaluateRiskFloor({ filesChanged: [p] }).surface));
    expect([...surfaces].sort()).toEqual([...RISK_TABLE.map((r) => r.surface), 'none'].sort());
    expect(MULTI_CASES.some((c) => evaluateRiskFloor({ filesChanged: c.files }).reason.includes(' more)'))).toBe(true);
    const pairs = new Set(SINGLE_CASES.map((c) => `${evaluateRiskFloor({ filesChanged: c.files }).surface} ${c.thresholdText}`));
    const missing = [...surfaces].flatMap((s) => THRESHOLD_TEXTS.map((t) => `${s} ${t}`)).filter((k) => !pairs.has(k));
    expect(missing, 'every surface under every threshold text').toEqual([]);
    for (const u of ['é', '漢字', '🔥', 'İ', 'ı', '\u212A', 'ſ']) {
      expect(PATHS.filter((p) => p.includes(u)).length, u).toBeGreaterThan(3);
    }
  });

  it(`agrees on ${ALL_CASES.length} cases: ${PATHS.length} single paths (×2 thresholds) and ${MULTI_CASES.length} multi-file sets (LC_ALL=C.UTF-8)`, () => {
    expect(ALL_CASES.length).toBeGreaterThan(2000);
    expect(disagreements(ALL_CASES, 'C.UTF-8')).toEqual([]);
  });

  it('agrees under LC_ALL=C (POSIX) as well', () => {
    expect(disagreements(ALL_CASES, 'C')).toEqual([]);
  });

  it('accepts and canonicalises the same threshold texts as parseThresholdText', () => {
    const texts = [
      ...THRESHOLD_TEXTS,
      '0.',
      '1.',
      '.5',
      '0.50',
      '0.500000',
      '1.000000',
      '0.000001',
      '.000001',
      '0.000010',
      '0.123456',
      '1.5',
      '1.0000001',
      '0.1234567',
      '-0',
      '+0.5',
      '01',
      '00',
      '.',
      '',
      ' 0.5',
      '0.5 ',
      '1e-1',
      'abc',
      '0,5',
      '2',
      '1.000001',
      '0.5\n',
      '\n0.5',
      '٠.٥',
      '０.５',
      '1.\t',
      'Infinity',
      'NaN',
    ];
    const cases: Case[] = texts.map((t) => ({ thresholdText: t, files: ['package.json'] }));
    const bash = runBash(cases, 'C.UTF-8');
    const verdicts = texts.map((t, n) => ({
      text: t,
      ts: parseThresholdText(t) === undefined ? 'rejected' : 'accepted',
      bash: bash[n]?.kind === 'ok' ? 'accepted' : 'rejected',
    }));
    expect(verdicts.filter((v) => v.ts !== v.bash)).toEqual([]);
    expect(verdicts.filter((v) => v.ts === 'accepted').length).toBeGreaterThan(15);
    expect(verdicts.filter((v) => v.ts === 'rejected').length).toBeGreaterThan(15);
    // The canonical form shows in the reason: compare the whole verdicts.
    expect(disagreements(cases, 'C.UTF-8')).toEqual([]);
  });

  it('has a driver that can tell a difference (a wrong answer is reported)', () => {
    // Guard against a vacuous pass: compare a TS verdict with bash at another threshold.
    const bash = runBash([{ thresholdText: '0.9', files: ['package.json'] }], 'C.UTF-8');
    const ts = tsVerdict({ thresholdText: '0.5', files: ['package.json'] });
    const b = bash[0];
    expect(b?.kind).toBe('ok');
    expect(b?.kind === 'ok' ? b.verdict : undefined).not.toEqual(ts);
    expect(b?.kind === 'ok' ? b.verdict.needs_review : undefined).toBe('false');
    expect(ts?.needs_review).toBe('true');
  });
});
