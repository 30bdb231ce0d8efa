/** buildSidecar (pure): the self-report as it reaches the sidecar. */
import { describe, expect, it } from 'vitest';
import { reflectionV1Schema } from '@forge-reflect/reflection-types';
import { buildSidecar, type SidecarFacts } from '../src/sidecar/build.js';

const facts = (selfReport: object): SidecarFacts => ({
  files: ['src/auth/token.ts', 'notes.md'],
  selfReport: { kind: 'text', text: JSON.stringify(selfReport) },
  sessionId: 's1',
  taskRef: 'acme#42',
  agent: 'claude-code',
  repo: 'acme',
  timestamp: '2026-11-22T10:00:00.000000Z',
  mode: 'solo',
  attempt: 1,
  threshold: 0.5,
});

describe('buildSidecar', () => {
  it('redacts secrets the agent pasted into its self-report, keeping the rest of the text', () => {
    const built = buildSidecar(facts({
      confidence: 0.6,
      most_likely_wrong: { surface: 'auth', description: 'rotated AKIAIOSFODNN7EXAMPLE; password=hunter2secret still in config' },
      known_not_in_diff: 'prod key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCD',
    }));
    const text = JSON.stringify(built.sidecar);
    for (const secret of ['AKIAIOSFODNN7EXAMPLE', 'hunter2secret', 'sk-ant-api03-abcdefghij']) expect(text).not.toContain(secret);
    expect(built.sidecar.most_likely_wrong?.description).toMatch(/^rotated \[REDACTED:[a-z_]+\]; password=\[REDACTED:[a-z_]+\] still in config$/);
    expect(built.selfReport).toBe('ok');
    expect(built.sidecar.provenance.degraded).toBe(false);
    expect(reflectionV1Schema.safeParse(built.sidecar).success).toBe(true);
  });

  it('takes files from git, sorted without repeats or empty names, and the risk from the floor', () => {
    const report = { confidence: 1, most_likely_wrong: { surface: 'none', description: 'x' }, known_not_in_diff: null };
    const built = buildSidecar({ ...facts(report), files: ['src/auth/token.ts', 'notes.md', '', 'notes.md'] });
    expect(built.sidecar.files_changed).toEqual(['notes.md', 'src/auth/token.ts']);
    expect(built.sidecar.risk.surface).toBe('auth');
    expect(built.sidecar.risk.needs_review).toBe(true);
  });

  it('fails closed when the changed files could not be listed: review, with the reason', () => {
    const report = { confidence: 1, most_likely_wrong: { surface: 'none', description: 'x' }, known_not_in_diff: null };
    const built = buildSidecar({ ...facts(report), files: null, blindReason: 'git did not finish within the 12 s budget' });
    expect(built.sidecar.files_changed).toEqual([]);
    expect(built.sidecar.risk.needs_review).toBe(true);
    expect(built.sidecar.risk.reason).toContain('review: git did not finish within the 12 s budget');
    expect(built.sidecar.provenance.degraded).toBe(true);
  });

  it('says in risk.reason when the list may hold changes made before the session', () => {
    const report = { confidence: 1, most_likely_wrong: { surface: 'none', description: 'x' }, known_not_in_diff: null };
    const built = buildSidecar({ ...facts(report), files: ['docs/a.md'], listingNote: 'no working-tree snapshot from SessionStart' });
    expect(built.sidecar.risk.needs_review).toBe(false);
    expect(built.sidecar.risk.reason).toMatch(/; no working-tree snapshot from SessionStart$/);
  });
});
