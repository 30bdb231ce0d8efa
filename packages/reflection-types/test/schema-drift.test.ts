/**
 * The committed JSON Schemas (schemas/*.schema.json) are generated from the zod source; this
 * suite regenerates them in memory and fails on any byte of drift (`npm run schemas` fixes it).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { generateJsonSchemas, renderJsonSchema } from '@forge-reflect/reflection-types/json-schema';
import * as fromSource from '../src/json-schema.js';

// ajv-formats is CommonJS: at run time the default import is the plugin function itself.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const SCHEMAS_DIR = join(REPO_ROOT, 'schemas');

const committedText = (file: string): string => readFileSync(join(SCHEMAS_DIR, file), 'utf8');

/** PRD §4, every field at every level. */
const PRD_FIELDS = [
  'schema',
  'task_ref',
  'agent',
  'session_id',
  'timestamp',
  'repo',
  'confidence',
  'most_likely_wrong',
  'known_not_in_diff',
  'risk',
  'files_changed',
  'provenance',
];
const PRD_RISK_FIELDS = ['needs_review', 'score', 'surface', 'reason'];
const PRD_PROVENANCE_FIELDS = ['source', 'reflection_attempt', 'degraded', 'reflection_mode'];
const PRD_MOST_LIKELY_WRONG_FIELDS = ['surface', 'description'];

interface ObjectSchema {
  type?: unknown;
  properties: Record<string, Record<string, unknown>>;
  required: string[];
  additionalProperties: unknown;
}

/** The object branch of a property (a nullable object is `anyOf: [object, null]`). */
function objectBranch(schema: Record<string, unknown> | undefined): ObjectSchema {
  if (schema === undefined) throw new Error('no such property');
  const branches = (schema.anyOf as Array<Record<string, unknown>> | undefined) ?? [schema];
  const object = branches.find((b) => b.type === 'object');
  if (object === undefined) throw new Error(`no object branch in ${JSON.stringify(schema)}`);
  return object as unknown as ObjectSchema;
}

const SIDECAR = {
  schema: 'reflection.v1',
  task_ref: 'stack#544',
  agent: 'unknown',
  session_id: 'unknown',
  timestamp: '2026-01-01T00:00:00Z',
  repo: 'stack',
  confidence: null,
  most_likely_wrong: null,
  known_not_in_diff: null,
  risk: { needs_review: false, score: 0, surface: 'none', reason: 'no files changed' },
  files_changed: [],
  provenance: { source: 'stop-hook', reflection_attempt: 1, degraded: true, reflection_mode: 'solo' },
};

describe('committed JSON Schemas vs the zod source', () => {
  const generated = generateJsonSchemas();

  it('generates reflection.v1, reflection-input.v1 and the bounce-loop inputs', () => {
    expect(generated.map((g) => g.file)).toEqual([
      'reflection.v1.schema.json',
      'reflection-input.v1.schema.json',
      'review-result.v1.schema.json',
      'test-result.v1.schema.json',
      'feedback.v1.schema.json',
    ]);
  });

  for (const g of generateJsonSchemas()) {
    it(`schemas/${g.file} is byte-identical to its regeneration (run \`npm run schemas\` if not)`, () => {
      const rendered = renderJsonSchema(g);
      expect(rendered.endsWith('}\n')).toBe(true);
      expect(committedText(g.file)).toBe(rendered);
    });
  }

  it('holds no schema file the generator does not write', () => {
    const committed = readdirSync(SCHEMAS_DIR)
      .filter((f) => f.endsWith('.schema.json'))
      .sort();
    expect(committed).toEqual(generated.map((g) => g.file).sort());
  });

  it('the built package is not stale: src and dist generate the same text', () => {
    // The drift check above runs against the built dist; a forgotten `tsc -b` would hide drift.
    expect(fromSource.generateJsonSchemas().map(fromSource.renderJsonSchema)).toEqual(generated.map(renderJsonSchema));
  });
});

describe('the committed reflection.v1 schema is not trivially permissive', () => {
  const schema = JSON.parse(committedText('reflection.v1.schema.json')) as ObjectSchema & Record<string, unknown>;
  const ajv = new Ajv({ strict: true, allErrors: true });
  addFormats(ajv);
  const validate = ajv.compile(schema);

  it('is a closed object that requires every PRD field', () => {
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.$id).toBe('https://forge-reflect.dev/schemas/reflection.v1.schema.json');
    expect(schema.type).toBe('object');
    expect(schema.additionalProperties).toBe(false);
    expect([...schema.required].sort()).toEqual([...PRD_FIELDS].sort());
    expect(Object.keys(schema.properties).sort()).toEqual([...PRD_FIELDS].sort());
  });

  it('closes every nested object and requires its PRD fields', () => {
    const nested: Array<[string, string[]]> = [
      ['risk', PRD_RISK_FIELDS],
      ['provenance', PRD_PROVENANCE_FIELDS],
      ['most_likely_wrong', PRD_MOST_LIKELY_WRONG_FIELDS],
    ];
    for (const [name, fields] of nested) {
      const object = objectBranch(schema.properties[name]);
      expect(object.additionalProperties, name).toBe(false);
      expect([...object.required].sort(), name).toEqual([...fields].sort());
      expect(Object.keys(object.properties).sort(), name).toEqual([...fields].sort());
    }
  });

  it('accepts a minimal valid sidecar (so the rejections below mean something)', () => {
    expect(validate(SIDECAR)).toBe(true);
  });

  it('rejects {}, naming every missing PRD field', () => {
    expect(validate({})).toBe(false);
    const missing = (validate.errors ?? [])
      .filter((e) => e.keyword === 'required')
      .map((e) => String((e.params as { missingProperty: unknown }).missingProperty));
    expect(missing.sort()).toEqual([...PRD_FIELDS].sort());
  });

  it('rejects a sidecar with an extra key, at the top and nested', () => {
    expect(validate({ ...SIDECAR, extra: 1 })).toBe(false);
    expect(validate.errors?.map((e) => [e.keyword, (e.params as { additionalProperty?: unknown }).additionalProperty])).toEqual([
      ['additionalProperties', 'extra'],
    ]);
    expect(validate({ ...SIDECAR, risk: { ...SIDECAR.risk, extra: 1 } })).toBe(false);
    expect(validate({ ...SIDECAR, provenance: { ...SIDECAR.provenance, extra: 1 } })).toBe(false);
    expect(validate({ ...SIDECAR, most_likely_wrong: { surface: 'auth', description: 'd', extra: 1 } })).toBe(false);
  });

  it('checks types, ranges, enums, the literal and the UTC timestamp', () => {
    expect(validate({ ...SIDECAR, schema: 'reflection.v2' })).toBe(false);
    expect(validate({ ...SIDECAR, confidence: 1.5 })).toBe(false);
    expect(validate({ ...SIDECAR, risk: { ...SIDECAR.risk, surface: 'critical' } })).toBe(false);
    expect(validate({ ...SIDECAR, timestamp: '2026-01-01T00:00:00+02:00' })).toBe(false);
    expect(validate({ ...SIDECAR, timestamp: '2026-02-30T00:00:00Z' })).toBe(false);
    expect(validate({ ...SIDECAR, provenance: { ...SIDECAR.provenance, reflection_attempt: 0 } })).toBe(false);
  });
});

describe('the committed reflection-input.v1 schema is not trivially permissive', () => {
  const schema = JSON.parse(committedText('reflection-input.v1.schema.json')) as ObjectSchema;
  const ajv = new Ajv({ strict: true, allErrors: true });
  addFormats(ajv);
  const validate = ajv.compile(schema);

  it('is closed and requires all but session_id', () => {
    expect(schema.additionalProperties).toBe(false);
    expect([...schema.required].sort()).toEqual(['confidence', 'known_not_in_diff', 'most_likely_wrong']);
    expect(Object.keys(schema.properties).sort()).toEqual(['confidence', 'known_not_in_diff', 'most_likely_wrong', 'session_id']);
    expect(objectBranch(schema.properties.most_likely_wrong).additionalProperties).toBe(false);
  });

  it('accepts a self-report and rejects {} and an extra key', () => {
    const input = { confidence: 0.8, most_likely_wrong: { surface: 'ui', description: 'd' }, known_not_in_diff: null };
    expect(validate(input)).toBe(true);
    expect(validate({})).toBe(false);
    expect(validate({ ...input, extra: 1 })).toBe(false);
  });
});
