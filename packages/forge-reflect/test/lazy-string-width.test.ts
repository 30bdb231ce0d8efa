// scripts/build/lazy-string-width.mjs: string-width's module set-up (an Intl.Segmenter, Unicode
// property regexes) moves from the CLI's start to the first width it measures.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error a build script in plain JavaScript, without types
import { lazyStringWidthSource } from '../../../scripts/build/lazy-string-width.mjs';
import { cleanupTempDirs, tempDir } from './helpers/spool.js';

type Transform = (source: string, file?: string) => string | Error;
const transform = lazyStringWidthSource as Transform;

afterAll(() => cleanupTempDirs());

/** A module of string-width's shape whose set-up counts itself on globalThis[counter]. */
function moduleOfItsShape(counter: string): string {
  return [
    "import { dirname, join } from 'node:path';",
    '',
    `globalThis.${counter} = (globalThis.${counter} ?? 0) + 1;`,
    "const separator = join('a', 'b');",
    'function helper(text) { return text.length; }',
    '',
    'export default function stringWidth(text, options = {}) {',
    '  return helper(text) + separator.length + (options.extra ?? 0);',
    '}',
    '',
  ].join('\n');
}

async function importSource(source: string): Promise<{ default: (text: string, options?: { extra?: number }) => number }> {
  const file = join(tempDir('forge-lazy-width-'), 'index.mjs');
  writeFileSync(file, source);
  return (await import(pathToFileURL(file).href)) as { default: (text: string, options?: { extra?: number }) => number };
}

describe('lazyStringWidthSource', () => {
  it('sets the module up at its first call, once, and keeps what the function returns', async () => {
    const counter = '__forgeLazyWidthSetUps';
    const g = globalThis as Record<string, unknown>;
    const plain = await importSource(moduleOfItsShape(`${counter}Plain`));
    expect(g[`${counter}Plain`]).toBe(1); // the module as published: set up as it loads

    const lazy = transform(moduleOfItsShape(counter));
    expect(lazy).not.toBeInstanceOf(Error);
    const deferred = await importSource(lazy as string);
    expect(g[counter]).toBeUndefined();
    expect(deferred.default('abcd')).toBe(plain.default('abcd'));
    expect(deferred.default('abcd', { extra: 2 })).toBe(9); // 4 + 'a/b' + 2
    expect(g[counter]).toBe(1);
  });

  it('takes every copy of string-width installed here (the build applies it to each one it bundles)', async () => {
    const modules = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'node_modules');
    const copies = [join(modules, 'string-width', 'index.js')];
    for (const name of readdirSync(modules)) copies.push(join(modules, name, 'node_modules', 'string-width', 'index.js'));
    const found = copies.filter((file) => existsSync(file));
    expect(found.length).toBeGreaterThanOrEqual(1);
    for (const file of found) expect(transform(await readFile(file, 'utf8'), file), file).not.toBeInstanceOf(Error);
  });

  it('refuses a shape it does not know, naming the file and the fix', () => {
    const named = transform('const x = 1;\nexport function stringWidth() {}\n', '/n/string-width/index.js');
    expect(named).toBeInstanceOf(Error);
    expect((named as Error).message).toContain('/n/string-width/index.js');
    expect((named as Error).message).toContain('not exactly one `export default function stringWidth(`');
    expect((named as Error).message).toContain('scripts/build/lazy-string-width.mjs');
    const extraExport = transform(`${moduleOfItsShape('x')}export const other = 1;\n`);
    expect((extraExport as Error).message).toContain('an import or export besides');
    const awaiting = transform('const data = await Promise.resolve(1);\nexport default function stringWidth() { return data; }\n');
    expect((awaiting as Error).message).toContain('uses `await`');
    const multiLine = transform(`import {\n  join,\n} from 'node:path';\n${moduleOfItsShape('y')}`);
    expect((multiLine as Error).message).toContain('an import over several lines');
  });
});
