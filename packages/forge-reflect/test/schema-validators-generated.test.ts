/**
 * The Stop hook's helper checks sidecars and self-reports with validators ajv generated from the
 * committed JSON Schemas (`npm run schemas`), so it loads neither zod nor ajv. These tests fail when
 * the generated file drifts from the schemas, or when zod creeps back into the helper's bundle.
 * (That the generated validators agree with zod and ajv, case by case: reflection-types'
 * zod-ajv-agreement test.)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a build script, plain JavaScript without types
import { renderStandaloneValidators, VALIDATORS_FILE } from '../../../scripts/build/standalone-validators.mjs';

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

describe('the generated validators', () => {
  it('are what the committed schemas generate today, byte for byte (npm run schemas fixes a drift)', () => {
    const render = renderStandaloneValidators as () => string;
    expect(readFileSync(VALIDATORS_FILE as string, 'utf8')).toBe(render());
  });

  it('leave zod and the ajv compiler out of the hook helper bundle', () => {
    const bundle = readFileSync(join(REPO_ROOT, 'hooks/lib/reflect-helper.cjs'), 'utf8');
    // zod's error class and ajv's compiler are named in their own messages, which minifying keeps.
    expect(bundle).toContain('must match format');
    expect(bundle).not.toMatch(/ZodError|invalid_type_error|strict mode: unknown keyword/);
    expect(bundle.length).toBeLessThan(60_000);
  });
});

describe('zod at run time', () => {
  const bundle = join(REPO_ROOT, 'packages/forge-reflect/dist-bundle');
  const files = readdirSync(bundle).filter((f) => f.endsWith('.js'));
  const text = new Map(files.map((f) => [f, readFileSync(join(bundle, f), 'utf8')]));
  /** The bundle files a module loads before it runs: its static imports, transitively. */
  const closure = (file: string, seen = new Set<string>()): Set<string> => {
    if (seen.has(file)) return seen;
    seen.add(file);
    for (const m of (text.get(file) ?? '').matchAll(/\bfrom\s*"\.\/([^"]+\.js)"|\bimport\s*"\.\/([^"]+\.js)"/g)) closure(m[1] ?? m[2] ?? '', seen);
    return seen;
  };
  const withZod = (file: string): boolean => [...closure(file)].some((f) => text.get(f)?.includes('ZodError'));

  it('is loaded by `self-report` only: report, metrics, validate, ingest and the rest start without it', () => {
    const commands = files.filter((f) => !f.startsWith('chunk-') && f !== 'cli.js');
    expect(commands.length).toBeGreaterThan(15);
    expect(commands.filter(withZod)).toEqual(commands.filter((f) => f.startsWith('self-report-')));
    expect(withZod('cli.js')).toBe(false);
  });
});
