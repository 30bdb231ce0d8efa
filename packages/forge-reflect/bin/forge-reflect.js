#!/usr/bin/env node
// The forge-reflect command. Everything lives in dist-bundle/ (built by `npm install`). A plain
// `ingest` (what the Stop hook starts after every turn) skips the argument parser (quick-ingest.ts);
// any other command does not load that module at all.
const argv = process.argv.slice(2);
const quick = argv[0] === 'ingest' ? await (await import('../dist-bundle/quick-ingest.js')).quickMain(argv) : undefined;
process.exitCode = quick ?? (await (await import('../dist-bundle/cli.js')).main(argv));
