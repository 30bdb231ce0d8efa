/**
 * The OpenTelemetry code is loaded only by `export` (and by `ingest` when export is on): no other
 * command's bundle chunk, nor the CLI's entry, reaches it through static imports.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from './helpers/spool.js';

const BUNDLE = join(PACKAGE_ROOT, 'dist-bundle');
/** A field name only the OTLP logs serializer writes. */
const OTEL_MARK = 'scopeLogs';

function staticClosure(entry: string): Set<string> {
  const seen = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(join(BUNDLE, file), 'utf8');
    // static forms only: `import … from "./x.js"` and `import "./x.js"`; `import("./x.js")` is dynamic
    for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*)"\.\/([^"]+\.js)"/g)) queue.push(m[1] as string);
  }
  return seen;
}

describe('bundle: OpenTelemetry only behind a dynamic import', () => {
  const files = readdirSync(BUNDLE).filter((f) => f.endsWith('.js'));
  const withOtel = files.filter((f) => readFileSync(join(BUNDLE, f), 'utf8').includes(OTEL_MARK));

  it('the marker is found (so the check below means something)', () => {
    expect(withOtel.length).toBeGreaterThan(0);
  });

  const entries = ['cli.js', ...files.filter((f) => /^[a-z-]+-[A-Z0-9]{8}\.js$/.test(f) && !/^(export|run-export|getMachineId-[a-z]+)-/.test(f))];
  it.each(entries)('%s does not statically reach OpenTelemetry code', (entry) => {
    const reached = [...staticClosure(entry)].filter((f) => withOtel.includes(f));
    expect(reached).toEqual([]);
  });

  it('ingest reaches it only through a dynamic import', () => {
    const ingest = files.find((f) => f.startsWith('ingest-')) as string;
    const texts = [...staticClosure(ingest)].map((f) => readFileSync(join(BUNDLE, f), 'utf8'));
    expect(texts.some((t) => /import\("\.\/run-export-[A-Z0-9]+\.js"\)/.test(t))).toBe(true);
  });
});
