/** The CLI bundle (dist-bundle/) as a module graph: which chunks a file reaches by static imports. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from './spool.js';

export const BUNDLE = join(PACKAGE_ROOT, 'dist-bundle');

export function bundleFiles(): string[] {
  return readdirSync(BUNDLE).filter((f) => f.endsWith('.js'));
}

/** Every chunk `entry` loads before it runs: static `import … from "./x.js"` and `import "./x.js"`, never `import("./x.js")`. */
export function staticClosure(entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(join(BUNDLE, file), 'utf8');
    for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*)"\.\/([^"]+\.js)"/g)) queue.push(m[1] as string);
  }
  return seen;
}

/** The chunks whose text holds `mark` (a string only one library writes). */
export function chunksWith(mark: string): string[] {
  return bundleFiles().filter((f) => readFileSync(join(BUNDLE, f), 'utf8').includes(mark));
}
