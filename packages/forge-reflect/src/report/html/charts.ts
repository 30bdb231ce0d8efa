/**
 * The report's pictures as Vega-Lite specifications: data in, a spec out. Pure. Colours for text,
 * axes and grid are `currentColor`, so the inline SVG follows the page's light or dark scheme;
 * needs-review is a shape as well as a colour.
 */

export type VegaLiteSpec = Record<string, unknown>;

const AXIS_CONFIG = {
  background: null,
  config: {
    font: 'system-ui, sans-serif',
    title: { color: 'currentColor', fontSize: 14 },
    axis: {
      labelColor: 'currentColor',
      titleColor: 'currentColor',
      domainColor: 'currentColor',
      tickColor: 'currentColor',
      gridColor: 'currentColor',
      gridOpacity: 0.15,
    },
    legend: { labelColor: 'currentColor', titleColor: 'currentColor' },
    view: { stroke: null },
  },
};

export interface TurnPoint {
  turn: number;
  time: string;
  score: number;
  confidence: number | null;
  review: 'needs review' | 'no review';
}

/** Risk score per turn (a triangle when the turn needs review), self-reported confidence beside it. */
export function turnsSpec(turns: readonly TurnPoint[]): VegaLiteSpec {
  const confidence = turns.filter((t) => t.confidence !== null).map((t) => ({ turn: t.turn, time: t.time, confidence: t.confidence }));
  const x = { field: 'turn', type: 'quantitative', title: 'turn (in time order)', axis: { tickMinStep: 1, format: 'd' } };
  return {
    ...AXIS_CONFIG,
    title: {
      text: 'Risk score and self-reported confidence per turn',
      subtitle: '▲ needs review   ● no review   □ self-reported confidence',
      subtitleColor: 'currentColor',
    },
    width: 640,
    height: 220,
    layer: [
      {
        data: { values: turns },
        mark: { type: 'point', filled: true, size: 80 },
        encoding: {
          x,
          y: { field: 'score', type: 'quantitative', title: 'risk score / confidence (0–1)', scale: { domain: [0, 1] } },
          shape: { field: 'review', type: 'nominal', title: 'risk floor', scale: { domain: ['needs review', 'no review'], range: ['triangle-up', 'circle'] } },
          color: { field: 'review', type: 'nominal', title: 'risk floor', scale: { domain: ['needs review', 'no review'], range: ['#d62728', '#1f77b4'] } },
          tooltip: [
            { field: 'time', title: 'time (UTC)' },
            { field: 'score', title: 'risk score' },
            { field: 'review', title: 'risk floor' },
          ],
        },
      },
      {
        data: { values: confidence },
        mark: { type: 'point', shape: 'square', size: 50, filled: false, color: '#2ca02c' },
        encoding: { x, y: { field: 'confidence', type: 'quantitative' }, tooltip: [{ field: 'confidence', title: 'confidence' }] },
      },
    ],
  };
}

export interface CountBar {
  label: string;
  count: number;
}

/** How many turns tripped each surface. */
export function surfacesSpec(bars: readonly CountBar[]): VegaLiteSpec {
  return {
    ...AXIS_CONFIG,
    title: 'Turns per risk surface',
    width: 400,
    height: { step: 22 },
    data: { values: bars },
    mark: { type: 'bar', color: '#1f77b4' },
    encoding: {
      y: { field: 'label', type: 'nominal', title: 'surface', sort: null },
      x: { field: 'count', type: 'quantitative', title: 'turns (count)', axis: { tickMinStep: 1, format: 'd' } },
      tooltip: [
        { field: 'label', title: 'surface' },
        { field: 'count', title: 'turns' },
      ],
    },
  };
}

export interface ReliabilityBin {
  lo: number;
  hi: number;
  n: number;
  mean_confidence: number;
  accuracy: number;
}

/**
 * The reliability diagram (as scikit-learn's CalibrationDisplay draws it): the share correct per
 * confidence bin against the diagonal of perfect calibration, with the count above each bar.
 */
export function reliabilitySpec(bins: readonly ReliabilityBin[]): VegaLiteSpec {
  const x = { field: 'lo', type: 'quantitative', title: 'self-reported confidence (bin, 0–1)', scale: { domain: [0, 1] } };
  return {
    ...AXIS_CONFIG,
    title: 'Reliability diagram: share correct per confidence bin',
    width: 420,
    height: 320,
    layer: [
      {
        data: { values: bins },
        mark: { type: 'bar', color: '#1f77b4', opacity: 0.85 },
        encoding: {
          x,
          x2: { field: 'hi' },
          y: { field: 'accuracy', type: 'quantitative', title: 'share correct (0–1)', scale: { domain: [0, 1] } },
          y2: { datum: 0 },
          tooltip: [
            { field: 'lo', title: 'from' },
            { field: 'hi', title: 'to' },
            { field: 'n', title: 'turns' },
            { field: 'accuracy', title: 'share correct', format: '.2f' },
          ],
        },
      },
      {
        data: { values: bins },
        mark: { type: 'text', dy: -6, color: 'currentColor' },
        encoding: { x: { field: 'mid', type: 'quantitative' }, y: { field: 'accuracy', type: 'quantitative' }, text: { field: 'label' } },
        transform: [
          { calculate: '(datum.lo + datum.hi) / 2', as: 'mid' },
          { calculate: "'n=' + datum.n", as: 'label' },
        ],
      },
      {
        data: {
          values: [
            { x: 0, y: 0 },
            { x: 1, y: 1 },
          ],
        },
        mark: { type: 'line', strokeDash: [4, 4], color: 'currentColor', opacity: 0.6 },
        encoding: { x: { field: 'x', type: 'quantitative' }, y: { field: 'y', type: 'quantitative' } },
      },
    ],
  };
}

export interface ToolBar {
  tool: string;
  success: number;
  calls: number;
}

/** Share of tool calls that succeeded, per tool. */
export function toolsSpec(bars: readonly ToolBar[]): VegaLiteSpec {
  return {
    ...AXIS_CONFIG,
    title: 'Tool success per tool',
    width: 400,
    height: { step: 22 },
    data: { values: bars },
    mark: { type: 'bar', color: '#2ca02c' },
    encoding: {
      y: { field: 'tool', type: 'nominal', title: 'tool', sort: null },
      x: { field: 'success', type: 'quantitative', title: 'calls that succeeded (share, 0–1)', scale: { domain: [0, 1] } },
      tooltip: [{ field: 'tool' }, { field: 'calls', title: 'calls' }, { field: 'success', title: 'success', format: '.0%' }],
    },
  };
}
