/**
 * doctor's "bash and git" check: the first `bash` on PATH, as the registered hooks find it, must be
 * 3.2 or newer (every Mac's /bin/bash is 3.2). Run against the stock-Mac stand-in's real bash 3.2,
 * the host's bash, and stand-in `bash` programs that report other versions.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { checkTools } from '../src/doctor/checks.js';
import { cleanupTempDirs, tempDir } from './helpers/spool.js';

afterEach(cleanupTempDirs);

const KIT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const HOST_PATH = process.env.PATH ?? '/usr/bin:/bin';

/** The stand-in's bin/ (bash 3.2.48 as bash and sh, FreeBSD tools, the host's git): made if needed, never skipped. */
function macosLikeBin(): string {
  return execFileSync(process.execPath, [join(KIT_ROOT, 'scripts', 'macos-like.mjs')], { encoding: 'utf8' }).trim();
}

/** A folder holding one `bash` that prints what `printf` of BASH_VERSINFO[0], [1] and BASH_VERSION would. */
function fakeBash(answer: string, status = 0): string {
  const dir = join(tempDir(), 'bin');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'bash');
  writeFileSync(path, `#!/bin/sh\nprintf '%s' '${answer}'\nexit ${status}\n`);
  chmodSync(path, 0o755);
  return dir;
}

describe('doctor: bash and git', () => {
  it("takes the stand-in's bash 3.2.48 (a stock Mac's bash) as ok, naming its version", () => {
    const bin = macosLikeBin();
    expect(execFileSync(join(bin, 'bash'), ['-c', 'echo $BASH_VERSION'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()).toMatch(
      /^3\.2\.48\(\d+\)-release$/,
    );
    const check = checkTools({ PATH: bin });
    expect(check).toMatchObject({ name: 'bash and git', status: 'ok' });
    expect(check.detail).toMatch(/^bash 3\.2\.48\(\d+\)-release, git version \d/);
    expect(check.fix).toBeUndefined();
  });

  it('is not misled by a ~/.bashrc that prints: bash 3.2 reads it for a `bash -c` whose stdin is a socket (a Node pipe)', () => {
    const home = tempDir();
    writeFileSync(join(home, '.bashrc'), 'echo from the bashrc\n');
    const check = checkTools({ PATH: macosLikeBin(), HOME: home });
    expect(check.status).toBe('ok');
    expect(check.detail).toMatch(/^bash 3\.2\.48\(\d+\)-release, git version /);
  });

  it("takes the host's bash as ok", () => {
    const check = checkTools({ PATH: HOST_PATH });
    expect(check.status).toBe('ok');
    expect(check.detail).toMatch(/^bash \d+\.\d+\.\d+\S*, git version /);
  });

  it.each([
    ['3 2 3.2.57(1)-release\n', '3.2.57(1)-release'],
    ['4 0 4.0.0(1)-release\n', '4.0.0(1)-release'],
    ['5 3 5.3.0(1)-release\n', '5.3.0(1)-release'],
  ])('bash %j is ok', (answer, version) => {
    const check = checkTools({ PATH: `${fakeBash(answer)}:${HOST_PATH}` });
    expect(check.status).toBe('ok');
    expect(check.detail.startsWith(`bash ${version}, git version `)).toBe(true);
  });

  it.each([
    ['3 1 3.1.17(1)-release\n', '3.1.17(1)-release'],
    ['2 5 2.05b.0(1)-release\n', '2.05b.0(1)-release'],
  ])('bash %j fails: older than 3.2, with the fix', (answer, version) => {
    const check = checkTools({ PATH: `${fakeBash(answer)}:${HOST_PATH}` });
    expect(check.status).toBe('fail');
    expect(check.detail).toBe(`bash ${version} is older than 3.2, the oldest the hooks run on`);
    expect(check.fix).toMatch(/^install bash 3\.2 or newer and put it first on PATH/);
    expect(check.fix).not.toMatch(/bash 4|brew/i);
  });

  it('fails with the fix when no bash is on PATH, or the `bash` there does not say its version', () => {
    const none = checkTools({ PATH: tempDir() });
    expect(none).toMatchObject({ status: 'fail', detail: 'bash not found on PATH' });
    expect(none.fix).toMatch(/^install bash 3\.2 or newer/);
    const mute = checkTools({ PATH: `${fakeBash('')}:${HOST_PATH}` });
    expect(mute).toMatchObject({ status: 'fail', detail: '`bash` on PATH does not say its version (exit 0)' });
    const broken = checkTools({ PATH: `${fakeBash('5 2 5.2.15(1)-release\n', 3)}:${HOST_PATH}` });
    expect(broken).toMatchObject({ status: 'fail', detail: '`bash` on PATH does not say its version (exit 3)' });
  });

  it('fails when git is missing, after a good bash', () => {
    const bashOnly = join(tempDir(), 'bin');
    mkdirSync(bashOnly);
    symlinkSync(join(macosLikeBin(), 'bash'), join(bashOnly, 'bash'));
    const check = checkTools({ PATH: bashOnly });
    expect(check).toMatchObject({ status: 'fail', fix: 'install git' });
    expect(check.detail).toMatch(/^bash 3\.2\.48\(\d+\)-release; git not found$/);
  });
});
