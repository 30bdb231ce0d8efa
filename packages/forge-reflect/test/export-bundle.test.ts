/**
 * The OpenTelemetry code is loaded only by `export` (and by `ingest` when export is on): no other
 * command's bundle chunk, nor the CLI's entry, reaches it through static imports.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLE, bundleFiles, chunksWith, staticClosure } from './helpers/bundle.js';

/** A field name only the OTLP logs serializer writes. */
const OTEL_MARK = 'scopeLogs';

describe('bundle: OpenTelemetry only behind a dynamic import', () => {
  const files = bundleFiles();
  const withOtel = chunksWith(OTEL_MARK);

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
