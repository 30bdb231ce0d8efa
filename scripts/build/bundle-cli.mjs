#!/usr/bin/env node
// Bundles the CLI (packages/forge-reflect/dist/cli.js and everything it imports, yargs and ajv
// included) into packages/forge-reflect/dist-bundle/, split so that each command's module is
// still loaded only when the command runs. One file per chunk instead of hundreds of small
// modules cuts the CLI's start by about a third. better-sqlite3 (a native addon) stays external.
// The folder sits at the same depth as dist/, so paths relative to import.meta.url still hold.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lazyStringWidth } from './lazy-string-width.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

// yargs imports node:assert for two checks; assert-lite.mjs has them without that module's start
// cost. Only yargs' own import is redirected: anything else that imports assert gets the real one.
const yargsAssertLite = {
  name: 'yargs-assert-lite',
  setup(b) {
    b.onResolve({ filter: /^(node:)?assert$/ }, (args) =>
      args.importer.includes('/node_modules/yargs/') ? { path: join(root, 'scripts/build/assert-lite.mjs') } : undefined,
    );
  },
};
const outdir = join(root, 'packages/forge-reflect/dist-bundle');
rmSync(outdir, { recursive: true, force: true });
await build({
  // quick-ingest.js: a plain `ingest` without yargs (bin/forge-reflect.js). sidecar-reader-worker.js:
  // the worker thread a cold sidecar index reads with (report/sidecar-reader.ts finds it beside the
  // chunk that starts it).
  entryPoints: [
    join(root, 'packages/forge-reflect/dist/cli.js'),
    join(root, 'packages/forge-reflect/dist/quick-ingest.js'),
    { in: join(root, 'packages/forge-reflect/dist/report/sidecar-reader-worker.js'), out: 'sidecar-reader-worker' },
  ],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['better-sqlite3'],
  // string-width's set-up (an Intl.Segmenter, Unicode property regexes) waits for help text to measure.
  plugins: [yargsAssertLite, lazyStringWidth],
  // yargs's ESM build and ajv are CommonJS in places: give the bundle a real `require`.
  banner: { js: "import { createRequire as __forgeCreateRequire } from 'node:module'; const require = __forgeCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
