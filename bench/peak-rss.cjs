// Loaded with `node --require` by the bench's memory figures only: at exit, the process writes its
// own peak resident set size (KiB, from getrusage) to $FORGE_BENCH_RSS_FILE.
'use strict';
const { writeFileSync } = require('node:fs');

process.on('exit', () => {
  const file = process.env.FORGE_BENCH_RSS_FILE;
  if (file) writeFileSync(file, String(process.resourceUsage().maxRSS));
});
