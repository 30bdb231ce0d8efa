// last-sidecar.mjs DIR: prints the path of the newest sidecar in DIR, nothing when there is none.
// A sidecar's name starts with its turn's time, which bash 3.2 (no clock) gives in whole seconds:
// of the names with the last time, the one written last.
import { readdirSync, statSync } from 'node:fs';

const dir = process.argv[2];
let names = [];
try {
  names = readdirSync(dir)
    .filter((n) => n.endsWith('.reflection.json'))
    .sort();
} catch {
  // no folder: no sidecar
}
const last = names.at(-1);
if (last !== undefined) {
  const time = (n) => n.slice(0, n.indexOf('-'));
  let best = { name: last, m: -1n };
  for (const name of names.filter((n) => time(n) === time(last))) {
    const m = statSync(`${dir}/${name}`, { bigint: true }).mtimeNs;
    if (m > best.m || (m === best.m && name > best.name)) best = { name, m };
  }
  process.stdout.write(`${dir}/${best.name}\n`);
}
