// What a CLI start costs beyond its command: yargs renders a command's whole help text right after
// starting it (in case the command asks for it later); the CLI switches that off (src/cli.ts,
// skipEarlyHelpRendering) and --help still works. And node:assert, which yargs imports for two
// checks, is not loaded by the bundle (scripts/build/assert-lite.mjs stands in for it). string-width's
// set-up (an Intl.Segmenter, Unicode property regexes: ~40 ms) waits for help text to measure
// (scripts/build/lazy-string-width.mjs).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import yargs, { type Argv } from 'yargs';
import { describe, expect, it } from 'vitest';
import { skipEarlyHelpRendering } from '../src/cli.js';
// @ts-expect-error a build script in plain JavaScript, without types
import { notStrictEqual, strictEqual } from '../../../scripts/build/assert-lite.mjs';
import { tempDir, cleanupTempDirs } from './helpers/spool.js';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'forge-reflect.js');
const BUNDLE = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist-bundle', 'cli.js');

/** Runs `x` through a small yargs parser and counts how often its usage object renders help. */
async function helpRendersWhenRunning(skip: boolean): Promise<{ renders: number; ran: boolean }> {
  let ran = false;
  let parser: Argv = yargs(['x']).command(
    'x',
    'a command',
    (y) => y.option('n', { type: 'number' }),
    () => {
      ran = true;
    },
  );
  if (skip) parser = skipEarlyHelpRendering(parser);
  const usage = (parser as unknown as { getInternalMethods(): { getUsageInstance(): { help(): string } } }).getInternalMethods().getUsageInstance();
  const help = usage.help.bind(usage);
  let renders = 0;
  usage.help = () => {
    renders += 1;
    return help();
  };
  await parser.parseAsync();
  return { renders, ran };
}

describe('help rendering', () => {
  it('yargs renders help on every command run; with the switch it does not', async () => {
    expect(await helpRendersWhenRunning(false)).toEqual({ renders: 1, ran: true });
    expect(await helpRendersWhenRunning(true)).toEqual({ renders: 0, ran: true });
  });

  it('leaves --help of the CLI and of a command whole', () => {
    const top = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' });
    expect(top.status).toBe(0);
    expect(top.stdout).toContain('forge-reflect <command> [options]');
    const command = spawnSync(process.execPath, [CLI, 'events', '--help'], { encoding: 'utf8' });
    expect(command.status).toBe(0);
    expect(command.stdout).toContain('--limit');
    expect(command.stdout).toContain('Examples:');
  });
});

describe('node:assert', () => {
  it('is not loaded by a command of the built CLI', () => {
    const state = tempDir();
    try {
      const script = `const { main } = await import(${JSON.stringify(pathToFileURL(BUNDLE).href)}); process.exitCode = await main(['ingest']); process.stderr.write(JSON.stringify(process.moduleLoadList));`;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, FORGE_DIR: state } });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain('drained 0');
      const loaded = JSON.parse(r.stderr) as string[];
      expect(loaded).toContain('NativeModule fs');
      expect(loaded).not.toContain('NativeModule assert');
    } finally {
      cleanupTempDirs();
    }
  });

  it('has a stand-in with the same two checks', () => {
    expect(() => strictEqual('a', 'a')).not.toThrow();
    expect(() => strictEqual(1, '1', 'not the same')).toThrow('not the same');
    expect(() => notStrictEqual(0, 1)).not.toThrow();
    expect(() => notStrictEqual(0, 0, 'the same')).toThrow('the same');
    expect(() => strictEqual(typeof 1, 'string')).toThrow('expected string, got number');
  });
});

describe("string-width's set-up", () => {
  /** How many Intl.Segmenter a run of the built CLI constructs (counted by a preloaded module). */
  function segmentersMade(argv: string[]): { count: number; status: number | null; stdout: string } {
    const state = tempDir();
    try {
      const counter = join(state, 'count-segmenters.mjs');
      writeFileSync(
        counter,
        'const Real = Intl.Segmenter; let made = 0;\n' +
          'Intl.Segmenter = class extends Real { constructor(...a) { made += 1; super(...a); } };\n' +
          "process.on('exit', () => process.stderr.write(`segmenters=${made}\\n`));\n",
      );
      const r = spawnSync(process.execPath, ['--import', pathToFileURL(counter).href, CLI, ...argv], {
        encoding: 'utf8',
        env: { ...process.env, FORGE_DIR: state },
      });
      const count = /segmenters=(\d+)/.exec(r.stderr)?.[1];
      expect(count, r.stderr).toBeDefined();
      return { count: Number(count), status: r.status, stdout: r.stdout };
    } finally {
      cleanupTempDirs();
    }
  }

  it('is not run by a command of the built CLI', () => {
    const events = segmentersMade(['events', '--limit', '1']);
    expect(events.status).toBe(0);
    expect(events.count).toBe(0);
  });

  it('runs when help is laid out, and the help is whole', () => {
    const help = segmentersMade(['report', '--help']);
    expect(help.status).toBe(0);
    expect(help.count).toBeGreaterThan(0);
    expect(help.stdout).toContain('--limit');
  });
});
