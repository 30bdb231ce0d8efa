/** buildSidecar (pure): the self-report as it reaches the sidecar. */
import { describe, expect, it } from 'vitest';
import { reflectionV1Schema } from '@forge-reflect/reflection-types';
import { buildSidecar, cleanText, sortedFiles, type SidecarFacts } from '../src/sidecar/build.js';
import { mulberry32 } from '../src/analysis/prng.js';

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
    const built = buildSidecar(
      facts({
        confidence: 0.6,
        most_likely_wrong: { surface: 'auth', description: 'rotated AKIAIOSFODNN7EXAMPLE; password=hunter2secret still in config' },
        known_not_in_diff: 'prod key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCD',
      }),
    );
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

  it('sorts any list of names as a Set then a sort would, without repeats or empty names (random lists)', () => {
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const alphabet = ['', 'a', 'b', 'B', '/', '.', 'é', 'z', '0', '\u{1F600}'];
    for (let round = 0; round < 200; round++) {
      const names = Array.from({ length: next() % 40 }, () => Array.from({ length: next() % 4 }, () => alphabet[next() % alphabet.length]).join(''));
      const want = [...new Set(names)].filter((n) => n !== '').sort();
      expect(sortedFiles(names)).toEqual(want);
    }
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

describe('buildSidecar checks with the generated validators, as the CLI reads', () => {
  it('refuses a self-report that breaks the schema with every problem (up to three): JSON Pointer and rule, as `forge-reflect validate` words them', () => {
    const cases: Array<[object, string]> = [
      [{ confidence: 1.5, most_likely_wrong: { surface: 'auth', description: 'x' }, known_not_in_diff: null }, '/confidence: must be <= 1'],
      [
        { confidence: 0.5, most_likely_wrong: { surface: 'db', description: 'x' }, known_not_in_diff: null },
        '/most_likely_wrong/surface: must be one of "auth", "data", "infra", "ui", "build", "test", "docs", "none"',
      ],
      [{ confidence: 0.5, most_likely_wrong: { surface: 'ui', description: 'x' } }, '/known_not_in_diff: is required'],
      [
        { confidence: 0.5, most_likely_wrong: { surface: 'ui', description: 'x' }, known_not_in_diff: null, mood: 'fine' },
        '/mood: is not allowed (unknown key)',
      ],
      [{ confidence: '0.5', most_likely_wrong: { surface: 'ui', description: 'x' }, known_not_in_diff: null }, '/confidence: must be number'],
      [
        { confidence: 7, most_likely_wrong: { surface: 'ai', description: 'x' } },
        '/known_not_in_diff: is required; /confidence: must be <= 1; /most_likely_wrong/surface: must be one of "auth", "data", "infra", "ui", "build", "test", "docs", "none"',
      ],
      [
        { confidence: 7, most_likely_wrong: 1, a: 1, b: 2 },
        '/known_not_in_diff: is required; /a: is not allowed (unknown key); /b: is not allowed (unknown key); and 2 more',
      ],
    ];
    for (const [report, reason] of cases) {
      const built = buildSidecar(facts(report));
      expect(built.selfReport, reason).toBe('invalid');
      expect(built.selfReportReason).toBe(reason);
      expect(built.sidecar.confidence).toBeNull();
      expect(built.sidecar.provenance.degraded).toBe(true);
    }
  });

  it('writes most_likely_wrong in the schema order whatever order the agent used, and drops session_id', () => {
    const built = buildSidecar(facts({ session_id: 's1', known_not_in_diff: 'k', most_likely_wrong: { description: 'd', surface: 'data' }, confidence: 0.25 }));
    expect(built.selfReport).toBe('ok');
    expect(Object.keys(built.sidecar.most_likely_wrong ?? {})).toEqual(['surface', 'description']);
    expect(JSON.stringify(built.sidecar)).toContain('"confidence":0.25,"most_likely_wrong":{"surface":"data","description":"d"},"known_not_in_diff":"k"');
    expect(reflectionV1Schema.safeParse(built.sidecar).success).toBe(true);
  });

  it('never returns a sidecar that breaks reflection.v1: an attempt of 0 or a timestamp of 30 February throws', () => {
    const report = { confidence: 1, most_likely_wrong: { surface: 'none', description: 'x' }, known_not_in_diff: null };
    expect(() => buildSidecar({ ...facts(report), attempt: 0 })).toThrow('/provenance/reflection_attempt: must be >= 1');
    expect(() => buildSidecar({ ...facts(report), timestamp: '2026-02-30T10:00:00Z' })).toThrow('/timestamp: must match format "date-time"');
    expect(buildSidecar({ ...facts(report), timestamp: '2028-02-29T10:00:00Z' }).sidecar.timestamp).toBe('2028-02-29T10:00:00Z');
  });
});

describe('cleanText', () => {
  it('removes exactly the characters of its class, whether or not a text holds any (every code unit to U+2100, then random texts)', () => {
    // eslint-disable-next-line no-control-regex
    const byRegex = (text: string) => text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '');
    for (let c = 0; c <= 0x2100; c++) {
      const text = `a${String.fromCharCode(c)}b`;
      expect(cleanText(text), `U+${c.toString(16)}`).toBe(byRegex(text));
    }
    const alphabet = [
      'a',
      ' ',
      '\t',
      '\n',
      '\r',
      '\u0000',
      '\u001b',
      '\u007f',
      '\u0085',
      '\u009f',
      '\u00a0',
      '\u202a',
      '\u202e',
      '\u202f',
      '\u2066',
      '\u2069',
      '\u206a',
      'é',
    ];
    const rand = mulberry32(7);
    const next = (n: number) => Math.floor(rand() * n);
    let changed = 0;
    for (let run = 0; run < 2000; run++) {
      let text = '';
      for (let k = next(12); k > 0; k--) text += alphabet[next(alphabet.length)];
      if (byRegex(text) !== text) changed++;
      expect(cleanText(text), JSON.stringify(text)).toBe(byRegex(text));
    }
    expect(changed).toBeGreaterThan(500);
  });
});
