/**
 * Vega-Lite → SVG in Node, with no canvas and no network: the spec is compiled with vega-lite and
 * rendered headless by vega's SVG string renderer. Loaded only by the commands that draw (a dynamic
 * import from report --format html and analyze calibration --format html).
 */
import type { VegaLiteSpec } from './charts.js';

export async function renderSvg(spec: VegaLiteSpec, description: string): Promise<string> {
  const [vega, vegaLite] = await Promise.all([import('vega'), import('vega-lite')]);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const compiled = vegaLite.compile(spec as any).spec;
  // No loader: every dataset is inline, so nothing is ever fetched.
  const view = new vega.View(vega.parse(compiled), {
    renderer: 'none',
    loader: {
      load: async () => Promise.reject(new Error('no network')),
      sanitize: async () => Promise.reject(new Error('no network')),
      http: async () => Promise.reject(new Error('no network')),
      file: async () => Promise.reject(new Error('no files')),
    } as never,
  });
  const svg = await view.toSVG();
  view.finalize();
  // role="img" with a title and a description of the numbers shown (the tables beside hold them all).
  const raw = (spec as { title?: unknown }).title;
  const title = typeof raw === 'object' && raw !== null ? String((raw as { text?: unknown }).text ?? 'chart') : String(raw ?? 'chart');
  return svg
    .replace(/^<svg /, `<svg role="img" aria-label="${escapeAttr(title)}" `)
    .replace(/^(<svg[^>]*>)/, `$1<title>${escapeText(title)}</title><desc>${escapeText(description)}</desc>`);
}

export function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function escapeAttr(text: string): string {
  return escapeText(text).replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}
