#!/usr/bin/env node
// Renders every runtime's package of the kit from the hook map and the built hooks
// (packages/forge-reflect/src/runtimes/plugins.ts): plugins/claude-code, plugins/codex,
// plugins/gemini, the marketplace files (.claude-plugin/marketplace.json,
// .agents/plugins/marketplace.json) and the root gemini-extension.json with its hooks/hooks.json.
// Run after `npm run build` (the plugins carry the generated risk table and node helper).
//
//   node scripts/build/render-plugins.mjs           writes what differs, removes what is no longer rendered
//   node scripts/build/render-plugins.mjs --check   writes nothing; lists each drifted file, exit 1 on any
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { renderPlugins } = await import(join(root, 'packages/forge-reflect/dist/runtimes/plugins.js'));
const check = process.argv.includes('--check');

const files = renderPlugins(root);
const wanted = new Set(files.map((f) => f.rel));
const drift = [];

for (const file of files) {
  const target = join(root, file.rel);
  let same = false;
  try {
    same = readFileSync(target).equals(file.bytes) && (statSync(target).mode & 0o111) === (file.mode & 0o111);
  } catch {
    same = false;
  }
  if (same) continue;
  drift.push(file.rel);
  if (check) continue;
  mkdirSync(dirname(target), { recursive: true });
  const tmp = `${target}.tmp-${process.pid}`;
  writeFileSync(tmp, file.bytes, { mode: file.mode });
  chmodSync(tmp, file.mode);
  renameSync(tmp, target);
}

// Anything else under plugins/ is not rendered: a leftover of an older kit, or an edit.
function walk(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}
for (const path of walk(join(root, 'plugins'))) {
  const rel = relative(root, path).split('\\').join('/');
  if (wanted.has(rel)) continue;
  drift.push(`${rel} (not rendered)`);
  if (!check) unlinkSync(path);
}

if (check) {
  if (drift.length > 0) {
    process.stderr.write(
      `plugins drifted from the hook map and hooks/ (node scripts/build/render-plugins.mjs rewrites them):\n${drift.map((d) => `  ${d}\n`).join('')}`,
    );
    process.exit(1);
  }
  process.stderr.write(`plugins: ${files.length} files as rendered\n`);
} else {
  process.stderr.write(drift.length > 0 ? drift.map((d) => `wrote ${d}\n`).join('') : `plugins: ${files.length} files, nothing to change\n`);
}
