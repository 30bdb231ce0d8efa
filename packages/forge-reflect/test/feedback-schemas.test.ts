import { feedbackV1Schema, reviewResultV1Schema, testResultV1Schema } from '@forge-reflect/reflection-types';
import { describe, expect, it } from 'vitest';
import { schemaProblems } from '../src/schema/validator.js';

const REVIEW = {
  decision: 'request_changes',
  findings: [
    {
      id: 'f1',
      severity: 'critical',
      category: 'security',
      message: 'SQL by concatenation',
      file: 'src/db.ts',
      line: 12,
      confidence: 0.9,
      fixable: true,
      suggested_fix: { description: 'parameterise', diff: '-a\n+b' },
    },
    { id: 'f2', severity: 'info', category: 'style', message: 'naming', confidence: 0.3, fixable: false },
  ],
};
const TESTS = {
  summary: { total: 3, passed: 2, failed: 1, skipped: 0 },
  failures: [
    {
      test_name: 'refresh',
      error: 'expired',
      root_cause: { type: 'logic', description: 'clock skew', file: 'src/t.ts', line: 4 },
      confidence: 0.8,
      suggested_fix: { description: 'allow 30 s skew' },
    },
  ],
  passed_tests: ['login', 'logout'],
};
const FEEDBACK = {
  verdict: 'partial',
  confidence: 0.6,
  rationale: 'half done',
  issues: [{ id: 'i1', type: 'missing', severity: 'error', message: 'no tests', evidence: 'diff' }],
  steering: [{ id: 's1', type: 'command', description: 'run the tests', safe: true, command: 'npm test' }],
};

describe('review-result.v1, test-result.v1, feedback.v1: zod and the committed schemas agree', () => {
  const cases: Array<[string, unknown, { safeParse(v: unknown): { success: boolean } }]> = [
    ['review-result.v1', REVIEW, reviewResultV1Schema],
    ['test-result.v1', TESTS, testResultV1Schema],
    ['feedback.v1', FEEDBACK, feedbackV1Schema],
  ];
  it.each(cases)('%s accepts a full valid document', (name, value, zod) => {
    expect(schemaProblems(name, value)).toEqual([]);
    expect(zod.safeParse(value).success).toBe(true);
  });

  it.each([
    ['review-result.v1', { ...REVIEW, decision: 'maybe' }, '/decision', 'enum'],
    ['review-result.v1', { ...REVIEW, findings: [{ ...REVIEW.findings[0], severity: 'fatal' }] }, '/findings/0/severity', 'enum'],
    ['review-result.v1', { ...REVIEW, findings: [{ ...REVIEW.findings[0], confidence: 1.2 }] }, '/findings/0/confidence', 'maximum'],
    ['review-result.v1', { ...REVIEW, findings: [{ ...REVIEW.findings[0], suggestedFix: {} }] }, '/findings/0/suggestedFix', 'additionalProperties'],
    ['review-result.v1', { findings: [] }, '/decision', 'required'],
    ['test-result.v1', { ...TESTS, summary: { ...TESTS.summary, failed: -1 } }, '/summary/failed', 'minimum'],
    [
      'test-result.v1',
      { ...TESTS, failures: [{ ...TESTS.failures[0], root_cause: { type: 'cosmic', description: 'd' } }] },
      '/failures/0/root_cause/type',
      'enum',
    ],
    ['test-result.v1', { ...TESTS, failures: [{ ...TESTS.failures[0], test: 'x' }] }, '/failures/0/test', 'additionalProperties'],
    ['feedback.v1', { ...FEEDBACK, verdict: 'done' }, '/verdict', 'enum'],
    ['feedback.v1', { ...FEEDBACK, steering: [{ id: 's', type: 't', description: 'd' }] }, '/steering/0/safe', 'required'],
  ] as const)('%s refuses a bad field with its path and rule (%s)', (name, value, path, rule) => {
    const problems = schemaProblems(name, value);
    expect(problems.map((p) => [p.path, p.rule])).toContainEqual([path, rule]);
    const zod = { 'review-result.v1': reviewResultV1Schema, 'test-result.v1': testResultV1Schema, 'feedback.v1': feedbackV1Schema }[name];
    expect(zod.safeParse(value).success).toBe(false);
  });
});
