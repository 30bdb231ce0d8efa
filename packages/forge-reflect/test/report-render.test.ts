/** The report's renderers (pure): what reaches a terminal, a pull request or a spreadsheet. */
import { describe, expect, it } from 'vitest';
import { printable } from '../src/output.js';
import { renderCsv, renderMarkdown, renderTable, type ReportView } from '../src/report/render.js';
import type { SidecarRecord } from '../src/report/sidecar-record.js';
import { summarize } from '../src/report/summary.js';

function record(over: Partial<SidecarRecord>): SidecarRecord {
  return {
    path: '/r/a.reflection.json',
    valid: true,
    error: null,
    timestamp: '2026-11-22T10:15:00.000000Z',
    task_ref: 'acme#42',
    agent: 'claude-code',
    session_id: 's1',
    repo: 'acme',
    surface: 'auth',
    score: 1,
    needs_review: true,
    confidence: 0.8,
    degraded: false,
    mode: 'solo',
    attempt: 1,
    files: ['src/auth/token.ts', 'README.md', 'docs/x.md'],
    ...over,
  };
}

function view(rows: SidecarRecord[], invalid: ReportView['invalid'] = []): ReportView {
  const totals = {
    sidecars: rows.length,
    needs_review: rows.filter((r) => r.needs_review).length,
    degraded: rows.filter((r) => r.degraded).length,
    confidence_reported: rows.filter((r) => r.confidence !== null).length,
    confidence_sum: rows.reduce((a, r) => a + (r.confidence ?? 0), 0),
    by_surface: { auth: rows.filter((r) => r.surface === 'auth').length },
  };
  return { summary: summarize(totals, invalid.length), rows, omitted: 0, invalid };
}

describe('printable', () => {
  it('shows control characters and bidi overrides as escapes, and leaves other text alone', () => {
    expect(printable('a\u001b[31mred\u0007b')).toBe('a\\u001b[31mred\\u0007b');
    expect(printable('x\u202ey\u2066z\u009b')).toBe('x\\u202ey\\u2066z\\u009b');
    expect(printable('café 漢字 🔥 tab-free')).toBe('café 漢字 🔥 tab-free');
  });
});

describe('renderers', () => {
  const hostile = record({ task_ref: 'acme#1\u001b]0;pwned\u0007', agent: 'a|b', files: ['=cmd|calc', 'x"y.ts'] });

  it('the table escapes terminal sequences from a hand-made sidecar', () => {
    const text = renderTable(view([hostile], [{ path: '/r/\u001bbad.reflection.json', error: 'not JSON' }]));
    expect(text).not.toContain('\u001b');
    expect(text).not.toContain('\u0007');
    expect(text).toContain('acme#1\\u001b]0;pwned\\u0007');
    expect(text).toContain('invalid sidecars (1):');
    expect(text).toMatch(/needs review\s+1 \(100\.0%\)/);
    expect(text).toMatch(/self-reported confidence\s+mean 0\.80 \(1 of 1 reported one\)/);
  });

  it('markdown escapes pipes so the table keeps its columns, and bolds a needed review', () => {
    const md = renderMarkdown(view([hostile, record({ needs_review: false, surface: 'docs', confidence: null })]));
    const rows = md.split('\n').filter((l) => l.startsWith('| 2026'));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain('a\\|b');
    expect(rows[0]).toContain('**yes**');
    expect(rows[1]).toContain('| no |');
    for (const row of rows) expect(row.split(/(?<!\\)\|/).length).toBe(10);
  });

  it('CSV quotes per RFC 4180 and defuses spreadsheet formulas', () => {
    const csv = renderCsv(view([hostile]));
    const [header, line] = csv.split('\r\n');
    expect(header).toBe('timestamp,task_ref,agent,session_id,repo,surface,score,needs_review,confidence,degraded,mode,attempt,files_count,files,path');
    expect(line).toContain('"\'=cmd|calc x""y.ts"');
    expect(line).toContain(',true,0.8,false,solo,1,2,');
  });

  it('a summary without sidecars says n/a, never 0% or NaN', () => {
    const text = renderTable(view([]));
    expect(text).toMatch(/needs review\s+0 \(n\/a\)/);
    expect(text).toContain('n/a (0 of 0 reported one)');
    expect(text).not.toContain('NaN');
  });
});
