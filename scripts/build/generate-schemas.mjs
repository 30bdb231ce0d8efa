#!/usr/bin/env node
// `npm run schemas`: writes schemas/*.schema.json from the zod source in packages/reflection-types.
// The files are committed; a test regenerates them in memory and fails on any drift.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateJsonSchemas, renderJsonSchema } from '@forge-reflect/reflection-types/json-schema';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'schemas');
mkdirSync(dir, { recursive: true });
for (const generated of generateJsonSchemas()) {
  const target = join(dir, generated.file);
  const tmp = `${target}.tmp-${process.pid}`;
  writeFileSync(tmp, renderJsonSchema(generated));
  renameSync(tmp, target);
  process.stderr.write(`wrote schemas/${generated.file}\n`);
}
