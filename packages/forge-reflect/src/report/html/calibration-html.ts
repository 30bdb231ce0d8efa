/** `analyze calibration --format html`: the reliability diagram of any corpus, as one page. */
import type { Labelled } from '../../analysis/auc.js';
import type { CalibrationOptions } from '../../analysis/calibration-report.js';
import { reliabilitySpec } from './charts.js';
import { reliabilityPage } from './page.js';
import { reliabilityOf } from './reliability.js';
import { renderSvg } from './render-svg.js';
import { writeHtml } from './write-html.js';

export async function writeCalibrationHtml(rows: readonly Labelled[], options: CalibrationOptions, source: string, out: unknown): Promise<void> {
  const r = reliabilityOf(rows, options);
  const svg =
    r.rows > 0 && r.needed === null && r.bins.length > 0
      ? await renderSvg(
          reliabilitySpec(r.bins),
          r.bins.map((b) => `confidence ${b.lo.toFixed(1)}–${b.hi.toFixed(1)}: ${b.n} rows, ${(b.accuracy * 100).toFixed(0)}% correct`).join('; '),
        )
      : undefined;
  const html = reliabilityPage('P1: calibration of self-reported confidence', new Date().toISOString(), source === '-' ? 'stdin' : source, r, svg);
  await writeHtml(html, out, `${r.rows} row(s)`);
}
