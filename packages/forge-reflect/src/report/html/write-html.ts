/** Writes the HTML report: to --out (default ./forge-reflect-report.html, 0644), or stdout with `-`. */
import type { Database } from 'better-sqlite3';
import { writeAtomic } from '../../atomic-write.js';
import { UserError } from '../../errors.js';
import type { SidecarRecord } from '../sidecar-record.js';
import type { SidecarTotals } from '../sidecar-index.js';
import { summarize } from '../summary.js';
import { buildModel, renderPage } from './report-html.js';

export const DEFAULT_HTML_OUT = 'forge-reflect-report.html';

export interface WriteHtmlInput {
  db: Database;
  logPath: string;
  dirs: readonly string[];
  filterText: string;
  totals: SidecarTotals;
  invalidCount: number;
  records: readonly SidecarRecord[];
  out: unknown;
}

export async function writeHtmlReport(input: WriteHtmlInput): Promise<void> {
  const model = buildModel({ ...input, summary: summarize(input.totals, input.invalidCount), now: new Date() });
  const html = await renderPage(model);
  await writeHtml(html, input.out, `${model.turns.length} turn(s), ${model.reliability.rows} outcome(s)`);
}

/** One page to a file or stdout; an unwritable path is one line naming it, exit 1. */
export async function writeHtml(html: string, out: unknown, what: string): Promise<void> {
  const target = out === undefined || out === '' ? DEFAULT_HTML_OUT : String(out);
  if (target === '-') {
    process.stdout.write(html);
    return;
  }
  try {
    writeAtomic(target, html, 0o644);
  } catch (error) {
    throw new UserError(
      `cannot write ${target} (${(error as NodeJS.ErrnoException).code ?? String(error)}); pass --out a writable path, or --out - for stdout`,
    );
  }
  process.stderr.write(`report written to ${target} (${what}); open it in a browser, it needs no network\n`);
}
