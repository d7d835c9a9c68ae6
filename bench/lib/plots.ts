// `--plots`: every measured curve as a PNG under bench/plots/ (and its points as JSON beside it),
// drawn by Vega-Lite (compiled to Vega, rendered to SVG headless, rasterised by resvg).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Resvg } from '@resvg/resvg-js';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { Curve } from './curves.js';

/** The Vega-Lite spec of one curve: a line per series, a point per measurement. */
function specOf(curve: Curve): TopLevelSpec {
  const xs = [...new Set(curve.points.map((point) => point.x))].sort((a, b) => a - b);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: curve.title,
    width: 560,
    height: 320,
    background: 'white',
    data: { values: curve.points.map((point) => ({ ...point })) },
    mark: { type: 'line', point: true },
    encoding: {
      x: {
        field: 'x',
        type: 'quantitative',
        title: curve.xTitle,
        // The measured x values are the ticks, and the axis ends where the measurements do.
        scale: curve.xLog
          ? { type: 'log', nice: false, domain: [xs[0]!, xs[xs.length - 1]!] }
          : { zero: false, nice: false },
        axis: { values: xs, labelOverlap: true, format: '~s' },
      },
      y: {
        field: 'y',
        type: 'quantitative',
        title: curve.yTitle,
        scale: curve.yLog ? { type: 'log' } : { zero: true },
      },
      color: {
        field: 'series',
        type: 'nominal',
        title: null,
        legend: { orient: 'bottom', columns: 2, labelLimit: 420 },
      },
      strokeDash: {
        condition: { test: "indexof(datum.series, 'baseline') >= 0", value: [5, 3] },
        value: [1, 0],
      },
    },
    config: { font: 'DejaVu Sans', axis: { grid: true } },
  };
}

/** Writes `<id>.png` and `<id>.json` for every curve into `directory`; returns the PNG paths. */
export async function writePlots(curves: readonly Curve[], directory: string): Promise<string[]> {
  mkdirSync(directory, { recursive: true });
  const written: string[] = [];
  for (const curve of curves) {
    if (curve.points.length === 0) continue;
    const view = new vega.View(vega.parse(compile(specOf(curve)).spec), { renderer: 'none' });
    const svg = await view.toSVG(2);
    view.finalize();
    const png = new Resvg(svg, { font: { loadSystemFonts: true }, background: 'white' }).render().asPng();
    const file = join(directory, `${curve.id}.png`);
    writeFileSync(file, png);
    writeFileSync(join(directory, `${curve.id}.json`), `${JSON.stringify(curve, null, 2)}\n`);
    written.push(file);
  }
  return written;
}
