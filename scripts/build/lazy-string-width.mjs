// string-width sets up, as its module loads, an Intl.Segmenter and regexes of Unicode properties
// (`\p{RGI_Emoji}` with the v flag). yargs, cliui and wrap-ansi each depend on a copy, the CLI
// bundle holds all three, and together they weigh on every CLI start, for a function that
// only measures help text. This transform keeps the module's code and defers that set-up to its
// first call: the module body moves into a function that runs once, and the default export calls
// through it. bundle-cli.mjs applies it to every copy.

import { readFile } from 'node:fs/promises';

const EXPORT = 'export default function stringWidth(';

/**
 * The source of a string-width module with its set-up deferred to the first call, or an Error that
 * names what no longer fits (a new string-width whose shape this transform does not know).
 */
export function lazyStringWidthSource(source, file = 'string-width/index.js') {
  const lines = source.split('\n');
  const firstBody = lines.findIndex((line) => line.trim() !== '' && !line.startsWith('import '));
  const imports = lines.slice(0, firstBody);
  const body = lines.slice(firstBody).join('\n');
  const problem = firstBody < 0 ? 'it has no body after its imports' : shapeProblem(imports, body);
  if (problem !== undefined) {
    return new Error(
      `bundle-cli: ${file} no longer has the shape scripts/build/lazy-string-width.mjs defers (${problem}); ` +
        'update that transform for the new string-width, or drop the plugin from bundle-cli.mjs (every CLI start then pays for its set-up)',
    );
  }
  return [
    ...imports,
    'let stringWidthOnceSetUp;',
    'function setUpStringWidth() {',
    body.replace(EXPORT, 'function stringWidth('),
    'return stringWidth;',
    '}',
    'export default function lazyStringWidth(...args) {',
    '  stringWidthOnceSetUp ??= setUpStringWidth();',
    '  return stringWidthOnceSetUp(...args);',
    '}',
    '',
  ].join('\n');
}

/** Why a module (its leading import lines, then its body) cannot be deferred, or undefined when it can. */
function shapeProblem(imports, body) {
  if (imports.some((line) => line.trim() !== '' && !/['"];?\s*$/.test(line))) return 'it has an import over several lines';
  if (body.split(EXPORT).length !== 2) return `it has not exactly one \`${EXPORT}\``;
  if (/^\s*(export|import)\b/m.test(body.replace(EXPORT, ''))) return 'it has an import or export besides its leading imports and its default export';
  if (/\bawait\b/.test(body)) return 'it uses `await`, which cannot move into a plain function';
  return undefined;
}

/** The esbuild plugin: every string-width/index.js of node_modules, deferred. */
export const lazyStringWidth = {
  name: 'lazy-string-width',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]string-width[\\/]index\.js$/ }, async (args) => {
      const result = lazyStringWidthSource(await readFile(args.path, 'utf8'), args.path);
      if (result instanceof Error) return { errors: [{ text: result.message }] };
      return { contents: result, loader: 'js' };
    });
  },
};
