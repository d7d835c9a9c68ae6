// Curves: series of (x, y) points a suite measured, drawn as PNG plots by `--plots`
// (lib/plots.ts) and summarised in the table (where a curve bends).

/** One measured point of one series. */
export interface CurvePoint {
  readonly series: string;
  readonly x: number;
  readonly y: number;
}

/** One plot: its file name (without extension), axes and points. */
export interface Curve {
  readonly id: string;
  readonly title: string;
  readonly xTitle: string;
  readonly yTitle: string;
  readonly xLog: boolean;
  readonly yLog: boolean;
  readonly points: CurvePoint[];
}

/** Every curve measured in this run, in the order the suites made them. */
export const curves: Curve[] = [];

/** The curve `id`, made on first use. */
export function curve(options: Omit<Curve, 'points'>): Curve {
  let found = curves.find((candidate) => candidate.id === options.id);
  if (found === undefined) {
    found = { ...options, points: [] };
    curves.push(found);
  }
  return found;
}

/**
 * Where a rising curve levels off: the smallest x whose y reaches `fraction` of the series'
 * largest y (e.g. the concurrency at which throughput reaches 90 % of its peak).
 */
export function kneeOf(points: readonly CurvePoint[], fraction = 0.9): { x: number; peak: number } {
  const peak = Math.max(...points.map((point) => point.y));
  const sorted = [...points].sort((a, b) => a.x - b.x);
  const knee = sorted.find((point) => point.y >= fraction * peak);
  return { x: knee?.x ?? Number.NaN, peak };
}

/** Parses `--name 1,2,3` style lists of positive integers (`10k`, `1M` allowed). */
export function parseSizeList(text: string, option: string): number[] {
  const sizes = text.split(',').map((part) => {
    const match = /^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$/.exec(part);
    if (match === null) throw new Error(`${option}: "${part}" is not a number (10000, 10k, 1M)`);
    const factor = match[2] === '' ? 1 : match[2]!.toLowerCase() === 'k' ? 1_000 : 1_000_000;
    const value = Math.round(Number(match[1]) * factor);
    if (!(value >= 1)) throw new Error(`${option}: "${part}" must be at least 1`);
    return value;
  });
  return [...new Set(sizes)].sort((a, b) => a - b);
}
