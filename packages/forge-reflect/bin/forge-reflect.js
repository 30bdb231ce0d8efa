#!/usr/bin/env node
// The forge-reflect command. Everything lives in dist-bundle/ (built by `npm install`). A plain
// `ingest` (what the Stop hook starts after every turn) skips the argument parser (quick-ingest.ts).
import { quickMain } from '../dist-bundle/quick-ingest.js';

const argv = process.argv.slice(2);
process.exitCode = (await quickMain(argv)) ?? (await (await import('../dist-bundle/cli.js')).main(argv));
