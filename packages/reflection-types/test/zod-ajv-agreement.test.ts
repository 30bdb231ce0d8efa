/**
 * PRD §9.4: the zod schema and the committed JSON Schema agree. Every case below is a JSON
 * text; zod (`safeParse`), ajv (strict, allErrors, ajv-formats, compiled from the committed
 * file) and the validators ajv generated from that file for the Stop hook's helper
 * (packages/forge-reflect/src/sidecar/schema-validators.generated.ts) must all three give it the
 * verdict the case expects.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import type { ZodTypeAny } from 'zod';
import {
  REFLECTION_MODES,
  REVIEW_SURFACES,
  reflectionV1Schema,
  selfReportInputSchema,
  type ReflectionV1Dto,
  type SelfReportInputDto,
} from '@forge-reflect/reflection-types';
import { validateSelfReportInput, validateSidecar } from '../../forge-reflect/src/sidecar/schema-validators.generated.js';
import { mulberry32, pick } from '../../../tests/support/random.js';

// ajv-formats is CommonJS: at run time the default import is the plugin function itself.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

function committedValidator(file: string): ValidateFunction {
  const ajv = new Ajv({ strict: true, allErrors: true });
  addFormats(ajv);
  return ajv.compile(JSON.parse(readFileSync(join(REPO_ROOT, 'schemas', file), 'utf8')) as object);
}

interface Case {
  label: string;
  /** The document, as JSON text (so `__proto__` keys and the like survive). */
  json: string;
  valid: boolean;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const json = (value: unknown): string => {
  const text = JSON.stringify(value);
  if (text === undefined) throw new Error('not JSON');
  return text;
};

/** The value with `path` set to `value`, or deleted when `value` is DELETE; the input is left alone. */
const DELETE = Symbol('delete');
function mutate(base: unknown, path: readonly string[], value: Json | typeof DELETE): Json {
  const copy = structuredClone(base) as { [key: string]: Json };
  let parent: { [key: string]: Json } = copy;
  for (const key of path.slice(0, -1)) {
    const next = parent[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) {
      throw new Error(`mutation path ${path.join('/')} runs through a non-object`);
    }
    parent = next;
  }
  const last = path[path.length - 1];
  if (last === undefined) throw new Error('empty mutation path');
  if (value === DELETE) {
    if (!(last in parent)) throw new Error(`nothing to delete at ${path.join('/')}`);
    delete parent[last];
  } else {
    parent[last] = value;
  }
  return copy;
}

type Generated = (data: unknown) => boolean;

/** Every verdict that is not the expected one, for the three validators. */
function verdictErrors(cases: readonly Case[], zod: ZodTypeAny, ajv: ValidateFunction, generated: Generated): string[] {
  const out: string[] = [];
  for (const c of cases) {
    const zodOk = zod.safeParse(JSON.parse(c.json)).success;
    const ajvOk = ajv(JSON.parse(c.json)) === true;
    const generatedOk = generated(JSON.parse(c.json)) === true;
    if (zodOk !== c.valid || ajvOk !== c.valid || generatedOk !== c.valid) {
      out.push(`${c.label}: expected ${c.valid ? 'valid' : 'invalid'}, zod ${zodOk}, ajv ${ajvOk}, generated ${generatedOk} — ${c.json}`);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// reflection.v1
// ---------------------------------------------------------------------------------------------

/** A realistic sidecar with every PRD field filled (no nulls anywhere). */
const REALISTIC: ReflectionV1Dto = {
  schema: 'reflection.v1',
  task_ref: 'mosaicstack/stack#544',
  agent: 'claude-code/opus',
  session_id: '6f1c2a9e-3b7d-4c1e-9a55-0d2f8e7b1c34',
  timestamp: '2026-03-14T09:26:53.589Z',
  repo: 'stack',
  confidence: 0.72,
  most_likely_wrong: {
    surface: 'auth',
    description: 'The refresh-token rotation is untested when two tabs refresh at the same time.',
  },
  known_not_in_diff: 'The staging database still has the old session table; the migration was run by hand there.',
  risk: {
    needs_review: true,
    score: 1,
    surface: 'auth',
    reason: 'auth surface (weight 1) in 2 file(s): src/auth/refresh.ts, src/auth/session.ts; review required at threshold 0.5',
  },
  files_changed: ['src/auth/refresh.ts', 'src/auth/session.ts', 'README.md'],
  provenance: { source: 'stop-hook', reflection_attempt: 1, degraded: false, reflection_mode: 'solo' },
};

const UNICODE_STRINGS = ['', 'plain', 'é漢字🔥👩‍💻', 'İı\u212Aſß', 'line\nbreak\ttab', 'quote " and \\ backslash', '\u0000nul', ' '];

function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 31;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

function randomTimestamp(rand: () => number): string {
  const year = 1970 + Math.floor(rand() * 130);
  const month = 1 + Math.floor(rand() * 12);
  const day = 1 + Math.floor(rand() * daysIn(year, month));
  const time = `${pad(Math.floor(rand() * 24))}:${pad(Math.floor(rand() * 60))}:${pad(Math.floor(rand() * 60))}`;
  const fraction = rand() < 0.5 ? '' : `.${String(Math.floor(rand() * 1e9)).slice(0, 1 + Math.floor(rand() * 9))}`;
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}T${time}${fraction}Z`;
}

const VALID_TIMESTAMPS = [
  '2026-01-01T00:00:00Z',
  '2026-12-31T23:59:59Z',
  '2026-02-28T23:59:59.999Z',
  '2024-02-29T12:00:00Z',
  '2000-02-29T00:00:00.1Z',
  '2026-06-30T12:34:56.123456789012Z',
  '1999-12-31T23:59:59.0Z',
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999999Z',
];

function validSidecars(): Array<{ label: string; value: ReflectionV1Dto }> {
  const rand = mulberry32(0x5ce1f);
  const out: Array<{ label: string; value: ReflectionV1Dto }> = [{ label: 'realistic', value: REALISTIC }];
  const n = 120;
  for (let i = 0; i < n; i++) {
    const surface = REVIEW_SURFACES[i % REVIEW_SURFACES.length] ?? 'none';
    const mode = REFLECTION_MODES[i % REFLECTION_MODES.length] ?? 'off';
    const selfReported = rand() < 0.6;
    const confidence = pick([0, 1, 0.5, rand(), 1e-9, 0.999999999], rand);
    const value: ReflectionV1Dto = {
      schema: 'reflection.v1',
      task_ref: pick(UNICODE_STRINGS, rand),
      agent: pick(['unknown', 'claude-code', 'agent 漢字'], rand),
      session_id: pick(['unknown', '', 'sess-🔥'], rand),
      timestamp: i < VALID_TIMESTAMPS.length ? (VALID_TIMESTAMPS[i] ?? '') : randomTimestamp(rand),
      repo: pick(UNICODE_STRINGS, rand),
      confidence: selfReported ? confidence : null,
      most_likely_wrong:
        selfReported && rand() < 0.8
          ? { surface: REVIEW_SURFACES[(i * 3) % REVIEW_SURFACES.length] ?? 'none', description: pick(UNICODE_STRINGS, rand) }
          : null,
      known_not_in_diff: selfReported && rand() < 0.7 ? pick(UNICODE_STRINGS, rand) : null,
      risk: {
        needs_review: rand() < 0.5,
        score: pick([0, 1, 0.85, 0.1, rand()], rand),
        surface,
        reason: pick(UNICODE_STRINGS, rand),
      },
      files_changed: Array.from({ length: Math.floor(rand() * 4) }, () => pick(UNICODE_STRINGS, rand)),
      provenance: {
        source: 'stop-hook',
        reflection_attempt: pick([1, 2, 3, 1000, 2 ** 31, Number.MAX_SAFE_INTEGER], rand),
        degraded: !selfReported,
        reflection_mode: mode,
      },
    };
    out.push({ label: `valid #${i} (${surface}, ${mode}${selfReported ? '' : ', nulls'})`, value });
  }
  return out;
}

const BAD_TIMESTAMPS: Json[] = [
  '2026-01-01T00:00:00+02:00',
  '2026-01-01T00:00:00-00:00',
  '2026-01-01T00:00:00+0000',
  '2026-01-01T00:00:00.123+00:00',
  '2026-01-01T00:00:00z',
  '2026-01-01t00:00:00Z',
  '2026-01-01 00:00:00Z',
  '2026-01-01T00:00:00',
  '2026-01-01T00:00Z',
  '2026-01-01T00Z',
  '2026-01-01',
  '2026-02-30T00:00:00Z',
  '2025-02-29T00:00:00Z',
  '2100-02-29T00:00:00Z',
  '2026-04-31T00:00:00Z',
  '2026-13-01T00:00:00Z',
  '2026-00-10T00:00:00Z',
  '2026-01-00T00:00:00Z',
  '2026-01-01T24:00:00Z',
  '2026-01-01T00:60:00Z',
  '2026-01-01T00:00:61Z',
  '2026-06-30T12:00:60Z',
  '2026-01-01T00:00:00.Z',
  '2026-01-01T00:00:00,5Z',
  '26-01-01T00:00:00Z',
  '+02026-01-01T00:00:00Z',
  ' 2026-01-01T00:00:00Z',
  '2026-01-01T00:00:00Z ',
  '2026-01-01T00:00:00Z\n',
  '２０２６-01-01T00:00:00Z',
  '٢٠٢٦-01-01T00:00:00Z',
  '',
  1767225600000,
  null,
];

/**
 * 23:59:60 is a valid RFC 3339 time (a leap second) for ajv-formats, but zod's datetime()
 * refuses any second above 59. Kept apart: see the test of that name.
 */
const LEAP_SECOND_TIMESTAMPS = ['2016-12-31T23:59:60Z', '2026-06-30T23:59:60.5Z'];

const WRONG_TYPES: Json[] = [1, true, null, [], {}];

function invalidSidecars(bases: readonly ReflectionV1Dto[]): Array<{ label: string; value: Json; raw?: string }> {
  const out: Array<{ label: string; value: Json; raw?: string }> = [];
  const each = (label: string, path: readonly string[], value: Json | typeof DELETE): void => {
    for (const [n, base] of bases.entries()) out.push({ label: `${label} [base ${n}]`, value: mutate(base, path, value) });
  };

  // Every field of every level: missing, and each wrong JSON type (null where null is not allowed).
  const stringFields = ['task_ref', 'agent', 'session_id', 'repo'];
  for (const f of stringFields) {
    each(`${f} missing`, [f], DELETE);
    for (const t of WRONG_TYPES) each(`${f} = ${json(t)}`, [f], t);
  }
  each('schema missing', ['schema'], DELETE);
  for (const v of ['reflection.v2', 'Reflection.v1', 'reflection.v1 ', '', 1, null] as Json[]) each(`schema = ${json(v)}`, ['schema'], v);
  each('timestamp missing', ['timestamp'], DELETE);
  for (const t of BAD_TIMESTAMPS) each(`timestamp = ${json(t)}`, ['timestamp'], t);
  each('confidence missing', ['confidence'], DELETE);
  for (const v of [-0.1, 1.01, 2, -1, 1e308, -5e-324, '0.5', true, [], {}, [0.5]] as Json[]) {
    each(`confidence = ${json(v)}`, ['confidence'], v);
  }
  each('most_likely_wrong missing', ['most_likely_wrong'], DELETE);
  for (const v of ['auth', 1, true, [], {}] as Json[]) each(`most_likely_wrong = ${json(v)}`, ['most_likely_wrong'], v);
  const mlw = ['most_likely_wrong'];
  each('most_likely_wrong.surface missing', [...mlw, 'surface'], DELETE);
  each('most_likely_wrong.description missing', [...mlw, 'description'], DELETE);
  each('most_likely_wrong.extra', [...mlw, 'extra'], 'x');
  each('most_likely_wrong.severity', [...mlw, 'severity'], null);
  for (const v of ['AUTH', 'high', 'security', '', ' auth', null, 1] as Json[]) {
    each(`most_likely_wrong.surface = ${json(v)}`, [...mlw, 'surface'], v);
  }
  for (const t of WRONG_TYPES) each(`most_likely_wrong.description = ${json(t)}`, [...mlw, 'description'], t);
  each('known_not_in_diff missing', ['known_not_in_diff'], DELETE);
  for (const v of [1, false, [], {}, ['x']] as Json[]) each(`known_not_in_diff = ${json(v)}`, ['known_not_in_diff'], v);

  each('risk missing', ['risk'], DELETE);
  for (const t of WRONG_TYPES) each(`risk = ${json(t)}`, ['risk'], t);
  for (const f of ['needs_review', 'score', 'surface', 'reason']) each(`risk.${f} missing`, ['risk', f], DELETE);
  each('risk.extra', ['risk', 'extra'], 1);
  each('risk.files', ['risk', 'files'], []);
  for (const v of ['true', 1, 0, null, []] as Json[]) each(`risk.needs_review = ${json(v)}`, ['risk', 'needs_review'], v);
  for (const v of [-0.1, 1.01, -1, 2, '0.5', null, true] as Json[]) each(`risk.score = ${json(v)}`, ['risk', 'score'], v);
  for (const v of ['critical', 'Auth', 'NONE', '', null, 0] as Json[]) each(`risk.surface = ${json(v)}`, ['risk', 'surface'], v);
  for (const v of [null, 1, [], {}] as Json[]) each(`risk.reason = ${json(v)}`, ['risk', 'reason'], v);

  each('files_changed missing', ['files_changed'], DELETE);
  for (const v of [null, 'a.ts', 1, {}, [1], [null], [['a.ts']], [{}], ['ok', 2]] as Json[]) {
    each(`files_changed = ${json(v)}`, ['files_changed'], v);
  }

  each('provenance missing', ['provenance'], DELETE);
  for (const t of WRONG_TYPES) each(`provenance = ${json(t)}`, ['provenance'], t);
  for (const f of ['source', 'reflection_attempt', 'degraded', 'reflection_mode']) {
    each(`provenance.${f} missing`, ['provenance', f], DELETE);
  }
  each('provenance.extra', ['provenance', 'extra'], true);
  for (const v of ['Stop-hook', 'cli', '', 'stop_hook', null, 1] as Json[]) each(`provenance.source = ${json(v)}`, ['provenance', 'source'], v);
  for (const v of [0, 1.5, '1', -1, null, true, 0.999999, 1e-9] as Json[]) {
    each(`provenance.reflection_attempt = ${json(v)}`, ['provenance', 'reflection_attempt'], v);
  }
  for (const v of ['false', 0, null, 'no'] as Json[]) each(`provenance.degraded = ${json(v)}`, ['provenance', 'degraded'], v);
  for (const v of ['SOLO', 'on', '', 'orchestrate', null, 2] as Json[]) {
    each(`provenance.reflection_mode = ${json(v)}`, ['provenance', 'reflection_mode'], v);
  }

  // Extra keys at the top.
  for (const k of ['extra', 'Schema', 'risk_score', 'constructor', 'toString', '']) each(`extra top-level key ${json(k)}`, [k], 1);

  // Not an object at all.
  for (const v of [null, [], 'reflection.v1', 1, true] as Json[]) out.push({ label: `document = ${json(v)}`, value: v });
  out.push({ label: 'document = {}', value: {} });

  // `__proto__` as a real own key (only JSON text can carry it through).
  for (const [n, base] of bases.entries()) {
    out.push({ label: `__proto__ key at top [base ${n}]`, value: null, raw: json(base).replace(/^\{/, '{"__proto__":{},') });
    out.push({
      label: `__proto__ key in provenance [base ${n}]`,
      value: null,
      raw: json(base).replace('"provenance":{', '"provenance":{"__proto__":{"source":"stop-hook"},'),
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// reflection-input.v1
// ---------------------------------------------------------------------------------------------

function validInputs(): Array<{ label: string; value: SelfReportInputDto }> {
  const rand = mulberry32(0x1e9007);
  const out: Array<{ label: string; value: SelfReportInputDto }> = [];
  for (let i = 0; i < 40; i++) {
    const surface = REVIEW_SURFACES[i % REVIEW_SURFACES.length] ?? 'none';
    const value: SelfReportInputDto = {
      confidence: pick([0, 1, 0.5, rand()], rand),
      most_likely_wrong: { surface, description: pick(UNICODE_STRINGS, rand) },
      known_not_in_diff: rand() < 0.4 ? null : pick(UNICODE_STRINGS, rand),
    };
    if (i % 2 === 0) value.session_id = pick(['abc', '', '漢字'], rand);
    out.push({ label: `valid input #${i} (${surface}${i % 2 === 0 ? ', session_id' : ''})`, value });
  }
  return out;
}

function invalidInputs(bases: readonly SelfReportInputDto[]): Array<{ label: string; value: Json }> {
  const out: Array<{ label: string; value: Json }> = [];
  const each = (label: string, path: readonly string[], value: Json | typeof DELETE): void => {
    for (const [n, base] of bases.entries()) out.push({ label: `${label} [base ${n}]`, value: mutate(base, path, value) });
  };
  each('confidence missing', ['confidence'], DELETE);
  for (const v of [null, -0.1, 1.01, '1', true] as Json[]) each(`confidence = ${json(v)}`, ['confidence'], v);
  each('most_likely_wrong missing', ['most_likely_wrong'], DELETE);
  for (const v of [null, 'auth', {}, []] as Json[]) each(`most_likely_wrong = ${json(v)}`, ['most_likely_wrong'], v);
  each('most_likely_wrong.extra', ['most_likely_wrong', 'extra'], 1);
  each('most_likely_wrong.surface = "risky"', ['most_likely_wrong', 'surface'], 'risky');
  each('most_likely_wrong.description missing', ['most_likely_wrong', 'description'], DELETE);
  each('known_not_in_diff missing', ['known_not_in_diff'], DELETE);
  for (const v of [1, [], {}] as Json[]) each(`known_not_in_diff = ${json(v)}`, ['known_not_in_diff'], v);
  for (const v of [null, 1, []] as Json[]) each(`session_id = ${json(v)}`, ['session_id'], v);
  each('extra key', ['extra'], 1);
  each('a sidecar key', ['schema'], 'reflection.v1');
  out.push({ label: 'a whole sidecar', value: REALISTIC as unknown as Json });
  for (const v of [null, [], 'x', {}] as Json[]) out.push({ label: `document = ${json(v)}`, value: v });
  return out;
}

// ---------------------------------------------------------------------------------------------

describe('zod and the committed JSON Schema agree on reflection.v1', () => {
  const ajv = committedValidator('reflection.v1.schema.json');
  const valid = validSidecars();
  const rand = mulberry32(0xba5e);
  const withObjects = valid.filter((v) => v.value.most_likely_wrong !== null && v.label !== 'realistic').map((v) => v.value);
  const bases = [REALISTIC, pick(withObjects, rand)];
  const invalid = invalidSidecars(bases);
  const cases: Case[] = [
    ...valid.map((v) => ({ label: v.label, json: json(v.value), valid: true })),
    ...invalid.map((v) => ({ label: v.label, json: v.raw ?? json(v.value), valid: false })),
  ];

  it(`has ≥300 cases (${cases.length}: ${valid.length} valid, ${invalid.length} invalid), covering every surface, mode and edge value`, () => {
    expect(cases.length).toBeGreaterThanOrEqual(300);
    expect(valid.length).toBeGreaterThan(100);
    expect(invalid.length).toBeGreaterThan(300);
    const values = valid.map((v) => v.value);
    expect(new Set(values.map((v) => v.risk.surface))).toEqual(new Set(REVIEW_SURFACES));
    expect(new Set(values.map((v) => v.most_likely_wrong?.surface).filter(Boolean))).toEqual(new Set(REVIEW_SURFACES));
    expect(new Set(values.map((v) => v.provenance.reflection_mode))).toEqual(new Set(REFLECTION_MODES));
    expect(values.some((v) => v.confidence === 0)).toBe(true);
    expect(values.some((v) => v.confidence === 1)).toBe(true);
    expect(values.some((v) => v.confidence === null && v.most_likely_wrong === null && v.known_not_in_diff === null)).toBe(true);
    expect(values.some((v) => v.files_changed.length === 0)).toBe(true);
    expect(values.some((v) => /\.\d+Z$/.test(v.timestamp))).toBe(true);
    expect(values.some((v) => JSON.stringify(v).includes('漢字'))).toBe(true);
    // The mutations really reach every nested object: their bases carry objects there.
    for (const base of bases) expect(base.most_likely_wrong).not.toBeNull();
    // Every JSON text is what it claims: no undefined or NaN slipped through JSON.stringify.
    for (const c of cases) expect(() => JSON.parse(c.json) as unknown, c.label).not.toThrow();
  });

  it('the realistic sidecar fills every PRD field and validates in both', () => {
    expect(Object.keys(REALISTIC).sort()).toEqual(
      [
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
      ].sort(),
    );
    expect(Object.values(REALISTIC).every((v) => v !== null)).toBe(true);
    expect(reflectionV1Schema.safeParse(REALISTIC).success).toBe(true);
    expect(ajv(structuredClone(REALISTIC))).toBe(true);
    expect(ajv.errors ?? null).toBeNull();
  });

  it('all three accept every valid case and reject every invalid case', () => {
    expect(verdictErrors(cases, reflectionV1Schema, ajv, validateSidecar as Generated)).toEqual([]);
  });

  it('leap seconds (23:59:60Z): zod and ajv agree', () => {
    // ajv-formats accepts a leap second and the committed `pattern` (\d{2} seconds) lets it
    // through; zod's datetime() refuses seconds above 59. One of the two has to change.
    const verdicts = LEAP_SECOND_TIMESTAMPS.map((timestamp) => {
      const doc = { ...REALISTIC, timestamp };
      return { timestamp, zod: reflectionV1Schema.safeParse(doc).success, ajv: ajv(doc) === true, generated: (validateSidecar as Generated)(doc) };
    });
    expect(verdicts.filter((v) => v.zod !== v.ajv || v.zod !== v.generated)).toEqual([]);
  });
});

describe('zod and the committed JSON Schema agree on reflection-input.v1', () => {
  const ajv = committedValidator('reflection-input.v1.schema.json');
  const valid = validInputs();
  const invalid = invalidInputs([
    valid.find((v) => v.value.session_id !== undefined && v.value.known_not_in_diff !== null)?.value ?? {
      confidence: 0.5,
      most_likely_wrong: { surface: 'data', description: 'd' },
      known_not_in_diff: 'k',
      session_id: 's',
    },
    { confidence: 1, most_likely_wrong: { surface: 'none', description: '' }, known_not_in_diff: null, session_id: 'x' },
  ]);
  const cases: Case[] = [
    ...valid.map((v) => ({ label: v.label, json: json(v.value), valid: true })),
    ...invalid.map((v) => ({ label: v.label, json: json(v.value), valid: false })),
  ];

  it(`has valid and invalid cases (${valid.length} valid, ${invalid.length} invalid), with and without session_id`, () => {
    expect(cases.length).toBeGreaterThanOrEqual(80);
    expect(valid.some((v) => v.value.session_id === undefined)).toBe(true);
    expect(valid.some((v) => v.value.session_id !== undefined)).toBe(true);
    expect(invalid.length).toBeGreaterThan(40);
  });

  it('all three accept every valid case and reject every invalid case', () => {
    expect(verdictErrors(cases, selfReportInputSchema, ajv, validateSelfReportInput as Generated)).toEqual([]);
  });
});
