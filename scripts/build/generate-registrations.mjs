#!/usr/bin/env node
// Writes each runtime's registration, generated from packages/forge-reflect/src/runtimes/hook-map.ts,
// to runtime/<runtime>/ for people to read: runtime/claude/settings.json, runtime/codex/hooks.json,
// runtime/gemini/settings.json. Run after `tsc -b` when the hook map or a runtime's commands change;
// a test fails when a committed file drifts from the generated one.
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { RUNTIME_MODULES } = await import(join(root, 'packages/forge-reflect/dist/runtimes/index.js'));
const { registrationOf, registrationValue } = await import(join(root, 'packages/forge-reflect/dist/runtimes/module.js'));

export const TARGETS = {
  'claude-code': 'runtime/claude/settings.json',
  codex: 'runtime/codex/hooks.json',
  gemini: 'runtime/gemini/settings.json',
  qwen: 'runtime/qwen/settings.json',
};

for (const [id, rel] of Object.entries(TARGETS)) {
  const target = join(root, rel);
  mkdirSync(dirname(target), { recursive: true });
  const tmp = `${target}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(registrationValue(registrationOf(RUNTIME_MODULES[id])), null, 2)}\n`);
  renameSync(tmp, target);
  process.stderr.write(`wrote ${rel}\n`);
}

// Runtimes that load a file of the kit's instead of a settings file: that file, as install writes it.
export const PLUGIN_TARGETS = { opencode: 'runtime/opencode/forge-reflect.js' };

for (const [id, rel] of Object.entries(PLUGIN_TARGETS)) {
  const target = join(root, rel);
  mkdirSync(dirname(target), { recursive: true });
  const tmp = `${target}.tmp-${process.pid}`;
  writeFileSync(tmp, RUNTIME_MODULES[id].hookFiles()[0].text);
  renameSync(tmp, target);
  process.stderr.write(`wrote ${rel}\n`);
}

// A runtime registered by hook files (Cline's wrappers): each file under runtime/<id>/, with its mode.
for (const [id, module] of Object.entries(RUNTIME_MODULES)) {
  if (typeof module.hookFiles !== 'function' || id in PLUGIN_TARGETS) continue;
  for (const file of module.hookFiles()) {
    const target = join(root, 'runtime', id, file.rel);
    mkdirSync(dirname(target), { recursive: true });
    const tmp = `${target}.tmp-${process.pid}`;
    writeFileSync(tmp, file.text, { mode: file.mode });
    chmodSync(tmp, file.mode);
    renameSync(tmp, target);
    process.stderr.write(`wrote runtime/${id}/${file.rel}\n`);
  }
}
