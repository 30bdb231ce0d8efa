#!/usr/bin/env node
// json-get FILE PATH: prints the JSON value at a dotted PATH (e.g. provenance.degraded, files_changed)
// of the JSON document in FILE, as compact JSON. Used by the bats suites (no jq needed).
import { readFileSync } from 'node:fs';

const [file, path = ''] = process.argv.slice(2);
let value = JSON.parse(readFileSync(file, 'utf8'));
for (const key of path.split('.').filter(Boolean)) value = value?.[key];
process.stdout.write(`${JSON.stringify(value)}\n`);
