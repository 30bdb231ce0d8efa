import { describe, expect, it } from 'vitest';
import { REFLECTION_MODES, REVIEW_SURFACES, type ReflectionV1Dto } from '@forge-reflect/reflection-types';
import { schemaProblems, type SchemaProblem } from '../src/schema/validator.js';

const SIDECAR: ReflectionV1Dto = {
  schema: 'reflection.v1',
  task_ref: 'stack#544',
  agent: 'claude-code',
  session_id: 'abc',
  timestamp: '2026-03-14T09:26:53.589Z',
  repo: 'stack',
  confidence: 0.7,
  most_likely_wrong: { surface: 'auth', description: 'token refresh race' },
  known_not_in_diff: null,
  risk: { needs_review: true, score: 1, surface: 'auth', reason: 'auth surface (weight 1) in 1 file(s): src/auth.ts; review required at threshold 0.5' },
  files_changed: ['src/auth.ts'],
  provenance: { source: 'stop-hook', reflection_attempt: 1, degraded: false, reflection_mode: 'solo' },
};

/** A deep copy of the sidecar, changed by `edit`. */
function sidecar(edit: (doc: Record<string, unknown> & ReflectionV1Dto) => void): unknown {
  const doc = structuredClone(SIDECAR) as Record<string, unknown> & ReflectionV1Dto;
  edit(doc);
  return doc;
}

const rules = (problems: SchemaProblem[]): string[] => problems.map((p) => `${p.path} ${p.rule}`);

describe("schemaProblems('reflection.v1', …)", () => {
  it('returns [] for a valid sidecar, with or without the self-reported fields', () => {
    expect(schemaProblems('reflection.v1', SIDECAR)).toEqual([]);
    expect(
      schemaProblems(
        'reflection.v1',
        sidecar((d) => {
          d.confidence = null;
          d.most_likely_wrong = null;
          d.known_not_in_diff = null;
          d.files_changed = [];
        }),
      ),
    ).toEqual([]);
  });

  it('reports a missing nested field at its own pointer, rule required', () => {
    const problems = schemaProblems(
      'reflection.v1',
      sidecar((d) => {
        delete (d.risk as Partial<ReflectionV1Dto['risk']>).score;
      }),
    );
    expect(problems).toEqual([{ path: '/risk/score', rule: 'required', message: 'is required' }]);
  });

  it('reports a missing top-level field at /<field>', () => {
    const problems = schemaProblems(
      'reflection.v1',
      sidecar((d) => {
        delete (d as Partial<ReflectionV1Dto>).timestamp;
      }),
    );
    expect(problems).toEqual([{ path: '/timestamp', rule: 'required', message: 'is required' }]);
  });

  it('reports an unknown key at its pointer, rule additionalProperties', () => {
    const problems = schemaProblems(
      'reflection.v1',
      sidecar((d) => {
        (d.provenance as Record<string, unknown>).extra = 1;
      }),
    );
    expect(problems).toEqual([{ path: '/provenance/extra', rule: 'additionalProperties', message: 'is not allowed (unknown key)' }]);
    expect(rules(schemaProblems('reflection.v1', { ...SIDECAR, extra: true }))).toEqual(['/extra additionalProperties']);
  });

  it('lists the allowed values of an enum', () => {
    const problems = schemaProblems(
      'reflection.v1',
      sidecar((d) => {
        (d.risk as Record<string, unknown>).surface = 'critical';
      }),
    );
    expect(problems).toEqual([{ path: '/risk/surface', rule: 'enum', message: `must be one of ${REVIEW_SURFACES.map((s) => `"${s}"`).join(', ')}` }]);
    const mode = schemaProblems(
      'reflection.v1',
      sidecar((d) => {
        (d.provenance as Record<string, unknown>).reflection_mode = 'on';
      }),
    );
    expect(mode).toEqual([
      {
        path: '/provenance/reflection_mode',
        rule: 'enum',
        message: `must be one of ${REFLECTION_MODES.map((s) => `"${s}"`).join(', ')}`,
      },
    ]);
  });

  it('names the expected literal', () => {
    expect(schemaProblems('reflection.v1', { ...SIDECAR, schema: 'reflection.v2' })).toEqual([
      { path: '/schema', rule: 'const', message: 'must be "reflection.v1"' },
    ]);
  });

  it('suppresses anyOf noise: confidence 2 is a maximum problem at /confidence', () => {
    const problems = schemaProblems('reflection.v1', { ...SIDECAR, confidence: 2 });
    expect(problems.some((p) => p.rule === 'anyOf')).toBe(false);
    expect(problems).toContainEqual({ path: '/confidence', rule: 'maximum', message: 'must be <= 1' });
    expect(problems.every((p) => p.path === '/confidence')).toBe(true);
  });

  it('explains a bad nullable object by its inner problem, not by anyOf', () => {
    const problems = schemaProblems(
      'reflection.v1',
      sidecar((d) => {
        d.most_likely_wrong = { surface: 'auth', description: 'd', extra: 1 } as unknown as ReflectionV1Dto['most_likely_wrong'];
      }),
    );
    expect(problems.some((p) => p.rule === 'anyOf')).toBe(false);
    expect(problems).toContainEqual({
      path: '/most_likely_wrong/extra',
      rule: 'additionalProperties',
      message: 'is not allowed (unknown key)',
    });
  });

  it('reports every problem at once, each once', () => {
    const problems = schemaProblems(
      'reflection.v1',
      sidecar((d) => {
        delete (d.risk as Partial<ReflectionV1Dto['risk']>).score;
        (d.provenance as Record<string, unknown>).reflection_attempt = 0;
        d.timestamp = '2026-01-01T00:00:00+02:00';
      }),
    );
    const found = rules(problems);
    expect(found).toContain('/risk/score required');
    expect(found).toContain('/provenance/reflection_attempt minimum');
    expect(found).toContain('/timestamp pattern');
    expect(new Set(found.map((f, i) => `${f} ${problems[i]?.message ?? ''}`)).size).toBe(problems.length);
  });

  it('uses / for the document itself', () => {
    expect(schemaProblems('reflection.v1', [])).toEqual([{ path: '/', rule: 'type', message: 'must be object' }]);
    expect(rules(schemaProblems('reflection.v1', {}))).toContain('/schema required');
  });

  it('validates the self-report input schema too', () => {
    const input = { confidence: 0.5, most_likely_wrong: { surface: 'docs', description: 'typo' }, known_not_in_diff: null };
    expect(schemaProblems('reflection-input.v1', input)).toEqual([]);
    expect(schemaProblems('reflection-input.v1', { ...input, confidence: null })).toEqual([{ path: '/confidence', rule: 'type', message: 'must be number' }]);
  });
});
