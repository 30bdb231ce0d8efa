#!/usr/bin/env node
// The layout of packages/forge-reflect/src (DESIGN.md, "Layout"): every import runs down, none
// closes a circle, and src/'s root keeps at most MAX_ROOT files.
//
// The rule. Each file stands on a floor: the shared leaves at src/'s root (events.ts, errors.ts …)
// on the lowest, then each folder on the floor FLOORS gives it, commands/ above every part, the
// entries (cli.ts, quick-ingest.ts) on top. A file may import a file of its own folder (subfolders
// count as their folder: report/html is report) or a file on a strictly lower floor; anything else
// runs back up. Folders on one floor are siblings and never import each other: a type two parts
// share lives below both. Circles are found between files, whatever their floors (type-only
// imports count too: a circle of types is a circle a reader has to walk).
//
// Usage: node scripts/check-layout.mjs [src dir]. Exit 0 and one summary line when clean; exit 1
// with each problem on stderr otherwise.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MAX_ROOT = 15;
/** The entries: nothing imports them. */
export const ENTRIES = ['cli.ts', 'quick-ingest.ts'];
/** Folder → floor, lowest first. The root's leaves are floor 0, commands/ and the entries above all. */
export const FLOORS = {
  runtimes: 1, // one module per agent runtime, its contract and the payload recogniser
  schema: 1, // the committed JSON Schemas and their validator
  analysis: 3, // the Phase-0 math over rows and git history (reads the log)
  demo: 1, // the demo's scripted session
  log: 2, // the event-log path: spool → drain → SQLite, redaction, lock
  sidecar: 3, // building and naming sidecars
  loops: 3, // bounce, learn and metrics over the log
  install: 3, // writing the registrations and hooks into a repo
  report: 4, // the sidecar index and the report renderers
  helper: 4, // the Stop hook's Node helper (bundled into hooks/lib/)
  export: 5, // OTLP export of the log
  doctor: 5, // the doctor's checks
  commands: 6, // one module per command, its options beside it
};
const ENTRY_FLOOR = 7;

function walk(dir, out = []) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Relative specifiers of static imports, `export … from` and `import()`; comments are skipped. */
export function importsOf(text) {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
  const found = [];
  const patterns = [
    /(?:^|[;\n}])\s*(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/g,
    /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) found.push(m[1]);
  return found;
}

function placeOf(rel) {
  const parts = rel.split('/');
  if (parts.length === 1) return { folder: '', floor: ENTRIES.includes(rel) ? ENTRY_FLOOR : 0 };
  const folder = parts[0];
  return { folder, floor: FLOORS[folder] };
}

export function checkLayout(srcDir) {
  const src = resolve(srcDir);
  const files = walk(src).map((f) => relative(src, f).split(sep).join('/'));
  const known = new Set(files);
  const problems = [];
  const edges = new Map(files.map((f) => [f, []]));
  for (const file of files) {
    const from = placeOf(file);
    if (from.floor === undefined) problems.push(`${file}: folder ${from.folder}/ has no floor in FLOORS`);
    for (const spec of importsOf(readFileSync(join(src, file), 'utf8'))) {
      const target = relative(src, resolve(dirname(join(src, file)), spec.replace(/\.js$/, '.ts')))
        .split(sep)
        .join('/');
      if (target.startsWith('..') || !known.has(target)) continue; // outside src/ (a package), or generated
      edges.get(file).push(target);
      const to = placeOf(target);
      const sameFolder = from.folder !== '' && from.folder === to.folder;
      const rootToRoot = from.folder === '' && to.folder === '' && from.floor === 0 && to.floor === 0;
      if (!sameFolder && !rootToRoot && !(to.floor < from.floor)) {
        problems.push(`${file} (floor ${from.floor}) imports ${target} (floor ${to.floor}): an import that runs back up`);
      }
    }
  }
  // Circles between files: Tarjan's strongly connected components.
  let index = 0;
  const idx = new Map(),
    low = new Map(),
    stack = [],
    onStack = new Set(),
    circles = [];
  const strong = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const group = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1 || edges.get(v).includes(v)) circles.push(group.sort());
    }
  };
  for (const f of files) if (!idx.has(f)) strong(f);
  for (const group of circles) problems.push(`a circle of ${group.length} files: ${group.join(' ⇄ ')}`);
  const atRoot = files.filter((f) => !f.includes('/')).length;
  if (atRoot > MAX_ROOT) problems.push(`${atRoot} files at src/'s root (at most ${MAX_ROOT})`);
  return { files: files.length, atRoot, circles: circles.length, problems };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const result = checkLayout(process.argv[2] ?? join(root, 'packages/forge-reflect/src'));
  if (result.problems.length > 0) {
    for (const p of result.problems) process.stderr.write(`check-layout: ${p}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write(`${result.files} files, no circle, ${result.atRoot} at the root\n`);
  }
}
