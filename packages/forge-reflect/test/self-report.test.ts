/**
 * `forge-reflect self-report`: checked with the schema the Stop hook uses, refused with the allowed
 * values (exit 2), written atomically (0600) where the hook looks for it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { selfReportInputSchema } from '@forge-reflect/reflection-types';
import { inputPath, selfReportFromArgs } from '../src/commands/self-report.js';
import { UserError } from '../src/errors.js';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'forge-reflect.js');

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (/^(REFLECTION_|FORGE_)/.test(key)) delete env[key];
  return { ...env, NO_COLOR: '1', ...extra };
}

function cli(args: string[], cwd: string, env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [CLI, 'self-report', ...args], { cwd, env: cleanEnv(env), encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const GOOD = ['--confidence', '0.7', '--surface', 'auth', '--wrong', 'token refresh fails across an expiry'];

function usageMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).exitCode).toBe(2);
    return (error as UserError).message;
  }
  throw new Error('expected a usage error');
}

describe('selfReportFromArgs', () => {
  const base = { confidence: '0.7', surface: 'auth', wrong: 'x breaks' };

  it('builds a report the schema accepts; --not-in-diff absent is null', () => {
    const report = selfReportFromArgs(base);
    expect(report).toEqual({ confidence: 0.7, most_likely_wrong: { surface: 'auth', description: 'x breaks' }, known_not_in_diff: null });
    expect(selfReportInputSchema.safeParse(report).success).toBe(true);
    expect(selfReportFromArgs({ ...base, notInDiff: 'ran only unit tests', session: 's-1' })).toMatchObject({
      known_not_in_diff: 'ran only unit tests',
      session_id: 's-1',
    });
  });

  it.each(['0', '1', '.5', '0.125', '1.0'])('accepts confidence %s', (confidence) => {
    expect(selfReportFromArgs({ ...base, confidence }).confidence).toBe(Number(confidence));
  });

  it.each(['abc', '1.5', '-0.1', '', '70%', '1e-1', 'NaN', '2'])('refuses confidence %j with the range', (confidence) => {
    expect(usageMessage(() => selfReportFromArgs({ ...base, confidence }))).toMatch(/--confidence .* number from 0 to 1/);
  });

  it('refuses an unknown surface, naming every allowed one', () => {
    const message = usageMessage(() => selfReportFromArgs({ ...base, surface: 'security' }));
    expect(message).toContain('auth|data|infra|ui|build|test|docs|none');
  });

  it('takes the surface in any case', () => {
    expect(selfReportFromArgs({ ...base, surface: 'Infra' }).most_likely_wrong.surface).toBe('infra');
  });

  it('refuses an empty --wrong, an empty --session, and an option given twice', () => {
    expect(usageMessage(() => selfReportFromArgs({ ...base, wrong: '  ' }))).toMatch(/--wrong/);
    expect(usageMessage(() => selfReportFromArgs({ ...base, session: '' }))).toMatch(/--session/);
    expect(usageMessage(() => selfReportFromArgs({ ...base, wrong: ['a', 'b'] }))).toMatch(/given 2 times/);
  });
});

describe('inputPath', () => {
  it('prefers --file, then $REFLECTION_INPUT, then the state dir ($FORGE_DIR here; the git cases run through the CLI below)', () => {
    expect(inputPath({ file: 'x.json' }, { REFLECTION_INPUT: '/a/b.json', FORGE_DIR: '/s' }, '/cwd').path).toBe('/cwd/x.json');
    expect(inputPath({}, { REFLECTION_INPUT: 'b.json', FORGE_DIR: '/s' }, '/cwd').path).toBe('/cwd/b.json');
    expect(inputPath({}, { FORGE_DIR: '/s' }, '/cwd')).toEqual({ path: '/s/reflection-input.json', inState: true });
  });
});

describe('forge-reflect self-report', () => {
  let scratch: string;
  let repo: string;

  beforeEach(() => {
    scratch = realpathSync(mkdtempSync(join(tmpdir(), 'forge-self-report-')));
    repo = join(scratch, 'my repo');
    mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
    spawnSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
  });

  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it('in a repo subfolder: writes <toplevel>/.forge/reflection-input.json (0600), .forge 0700 with a .gitignore of *', () => {
    const r = cli([...GOOD, '--not-in-diff', 'staging uses another issuer'], join(repo, 'src', 'deep'));
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const file = join(repo, '.forge', 'reflection-input.json');
    expect(r.stdout).toContain(file);
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    expect(lstatSync(join(repo, '.forge')).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(repo, '.forge', '.gitignore'), 'utf8')).toBe('*\n');
    const written = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    expect(selfReportInputSchema.parse(written)).toEqual({
      confidence: 0.7,
      most_likely_wrong: { surface: 'auth', description: 'token refresh fails across an expiry' },
      known_not_in_diff: 'staging uses another issuer',
    });
    expect(readdirSync(join(repo, '.forge'))).toEqual(['.gitignore', 'reflection-input.json']); // no temp file left
    expect(existsSync(join(repo, 'src', 'deep', '.forge'))).toBe(false);
  });

  it('a second report replaces the pending one and says so', () => {
    expect(cli(GOOD, repo).status).toBe(0);
    const r = cli(['--confidence', '0.2', '--surface', 'data', '--wrong', 'the migration is not reversible'], repo);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/replacing one/);
    const written = JSON.parse(readFileSync(join(repo, '.forge', 'reflection-input.json'), 'utf8')) as { confidence: number };
    expect(written.confidence).toBe(0.2);
  });

  it('honours --file, $REFLECTION_INPUT and $FORGE_DIR', () => {
    expect(cli([...GOOD, '--file', 'custom.json'], repo).status).toBe(0);
    expect(existsSync(join(repo, 'custom.json'))).toBe(true);
    expect(lstatSync(join(repo, 'custom.json')).mode & 0o777).toBe(0o600);
    expect(cli(GOOD, repo, { REFLECTION_INPUT: join(scratch, 'env-input.json') }).status).toBe(0);
    expect(existsSync(join(scratch, 'env-input.json'))).toBe(true);
    expect(cli(GOOD, repo, { FORGE_DIR: join(scratch, 'state') }).status).toBe(0);
    expect(existsSync(join(scratch, 'state', 'reflection-input.json'))).toBe(true);
    expect(readFileSync(join(scratch, 'state', '.gitignore'), 'utf8')).toBe('*\n');
    expect(existsSync(join(repo, '.forge'))).toBe(false);
  });

  it('outside a repository: <cwd>/.forge', () => {
    const outside = join(scratch, 'plain');
    mkdirSync(outside);
    expect(cli(GOOD, outside).status).toBe(0);
    expect(existsSync(join(outside, '.forge', 'reflection-input.json'))).toBe(true);
  });

  it.each([
    [['--confidence', '1.5', '--surface', 'auth', '--wrong', 'x'], /0 to 1/],
    [['--confidence', 'high', '--surface', 'auth', '--wrong', 'x'], /0 to 1/],
    [['--confidence', '0.5', '--surface', 'security', '--wrong', 'x'], /auth\|data\|infra\|ui\|build\|test\|docs\|none/],
    [['--confidence', '0.5', '--surface', 'auth'], /wrong/],
  ])('refuses %j with exit 2, one line, and writes nothing', (args, message) => {
    const r = cli(args, repo);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n')[0]).toMatch(message);
    expect(r.stderr).not.toMatch(/\bat .*\.js:\d+/);
    expect(existsSync(join(repo, '.forge'))).toBe(false);
  });

  it('a --file in a folder that does not exist is bad input (exit 1)', () => {
    const r = cli([...GOOD, '--file', join(scratch, 'nope', 'x.json')], repo);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/does not exist/);
  });

  it('--json prints the file and the report', () => {
    const r = cli([...GOOD, '--session', 'abc', '--json'], repo, { REFLECTION_MODE: 'solo' });
    const out = JSON.parse(r.stdout) as { file: string; replaced: boolean; report: { session_id: string }; warnings: string[] };
    expect(out.file).toBe(join(repo, '.forge', 'reflection-input.json'));
    expect(out.replaced).toBe(false);
    expect(out.report.session_id).toBe('abc');
    expect(out.warnings).toEqual([]);
  });

  it('warns when REFLECTION_MODE would make the hook ignore the file', () => {
    const r = cli(GOOD, repo);
    expect(r.stdout).toMatch(/REFLECTION_MODE is unset/);
  });
});
