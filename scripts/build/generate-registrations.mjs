#!/usr/bin/env node
// Writes each runtime's registration, generated from packages/forge-reflect/src/runtimes/hook-map.ts,
// to runtime/<runtime>/ for people to read: runtime/claude/settings.json, runtime/codex/hooks.json,
// runtime/gemini/settings.json. Run after `tsc -b` when the hook map or a runtime's commands change;
// a test fails when a committed file drifts from the generated one.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { RUNTIME_MODULES } = await import(join(root, 'packages/forge-reflect/dist/runtimes/index.js'));
const { registrationOf, registrationValue } = await import(join(root, 'packages/forge-reflect/dist/runtimes/module.js'));

export const TARGETS = { 'claude-code': 'runtime/claude/settings.json', codex: 'runtime/codex/hooks.json', gemini: 'runtime/gemini/settings.json', qwen: 'runtime/qwen/settings.json' };

for (const [id, rel] of Object.entries(TARGETS)) {
  const target = join(root, rel);
  mkdirSync(dirname(target), { recursive: true });
  const tmp = `${target}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(registrationValue(registrationOf(RUNTIME_MODULES[id])), null, 2)}\n`);
  renameSync(tmp, target);
  process.stderr.write(`wrote ${rel}\n`);
}
