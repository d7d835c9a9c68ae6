/** One line of the report; `--json` writes these objects as they are. */
export interface Row {
  readonly name: string;
  readonly unit: string;
  readonly value: number;
  /** The same quantity for the baseline, measured in the same run; null when there is none. */
  readonly baseline: number | null;
  /** `value / baseline` (toolfence ÷ baseline); null without a baseline. */
  readonly ratio: number | null;
  /**
   * E.g. `"<= 2"`. Judged on `ratio` when there is a baseline, on `value` otherwise; null when
   * the row is for information only.
   */
  readonly target: string | null;
}

export function row(
  name: string,
  unit: string,
  value: number,
  baseline: number | null = null,
  target: string | null = null,
): Row {
  const ratio = baseline === null || baseline === 0 ? null : value / baseline;
  return { name, unit, value, baseline, ratio, target };
}

/** `true` met, `false` missed, `null` no target. */
export function verdict(line: Row): boolean | null {
  if (line.target === null) return null;
  const match = /^(<=|>=|==|<|>)\s*(-?[0-9.]+)$/.exec(line.target.trim());
  if (match === null) throw new Error(`unreadable target ${JSON.stringify(line.target)} in ${line.name}`);
  const subject = line.baseline === null ? line.value : line.ratio;
  if (subject === null || Number.isNaN(subject)) return false;
  const bound = Number(match[2]);
  switch (match[1]) {
    case '<=':
      return subject <= bound;
    case '>=':
      return subject >= bound;
    case '<':
      return subject < bound;
    case '>':
      return subject > bound;
    default:
      return subject === bound;
  }
}

function formatNumber(value: number | null): string {
  if (value === null) return '';
  if (Number.isNaN(value)) return 'n/a';
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return Math.round(value).toLocaleString('en-US');
  if (magnitude >= 100) return value.toFixed(0);
  if (magnitude >= 10) return value.toFixed(1);
  if (Number.isInteger(value)) return String(value);
  return value.toFixed(magnitude >= 1 ? 2 : 3);
}

/** The report as a Markdown table (readable in a terminal, pasted as is into RESULTS.md). */
export function formatTable(rows: readonly Row[]): string {
  const header = ['name', 'unit', 'value', 'baseline', 'ratio', 'target', 'result'];
  const body = rows.map((line) => {
    const met = verdict(line);
    return [
      line.name,
      line.unit,
      formatNumber(line.value),
      formatNumber(line.baseline),
      line.ratio === null ? '' : formatNumber(line.ratio),
      line.target === null ? '' : line.baseline === null ? `value ${line.target}` : `ratio ${line.target}`,
      met === null ? '' : met ? 'pass' : 'FAIL',
    ];
  });
  const widths = header.map((title, column) =>
    Math.max(title.length, ...body.map((cells) => (cells[column] ?? '').length)),
  );
  const numeric = new Set([2, 3, 4]);
  const line = (cells: readonly string[]) =>
    `| ${cells
      .map((cell, column) =>
        numeric.has(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
      )
      .join(' | ')} |`;
  const rule = `|${widths.map((width, column) => (numeric.has(column) ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2))).join('|')}|`;
  return [line(header), rule, ...body.map(line)].join('\n');
}

/** Remarks printed under the table (a cross-check that disagreed, a service quirk...). */
export const notes: string[] = [];
