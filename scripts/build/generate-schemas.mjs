#!/usr/bin/env node
// `npm run schemas`: writes schemas/*.schema.json from the zod source in packages/reflection-types,
// then the Stop hook helper's standalone validators from those schemas (standalone-validators.mjs).
// The files are committed; tests regenerate them in memory and fail on any drift.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateJsonSchemas, renderJsonSchema } from '@forge-reflect/reflection-types/json-schema';
import { renderStandaloneValidators, VALIDATORS_FILE } from './standalone-validators.mjs';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'schemas');
mkdirSync(dir, { recursive: true });
for (const generated of generateJsonSchemas()) {
  const target = join(dir, generated.file);
  const tmp = `${target}.tmp-${process.pid}`;
  writeFileSync(tmp, renderJsonSchema(generated));
  renameSync(tmp, target);
  process.stderr.write(`wrote schemas/${generated.file}\n`);
}

const tmp = `${VALIDATORS_FILE}.tmp-${process.pid}`;
writeFileSync(tmp, renderStandaloneValidators());
renameSync(tmp, VALIDATORS_FILE);
process.stderr.write('wrote packages/forge-reflect/src/sidecar/schema-validators.generated.ts\n');
