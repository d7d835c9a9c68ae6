// House rules that a reader of the tree relies on (CONTRIBUTING.md, "The house"): no source file
// past 400 lines, and no comment that carries history (an issue number) instead of a reason.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const MAX_LINES = 400;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|mts|sql|lua)$/.test(name) && !/\.test(-d)?\.ts$|\.test-support\.ts$/.test(name))
      out.push(path);
  }
  return out;
}

const files = readdirSync(join(root, 'packages')).flatMap((pkg) => {
  const src = join(root, 'packages', pkg, 'src');
  try {
    return statSync(src).isDirectory() ? sourceFiles(src) : [];
  } catch {
    return [];
  }
});

/** Issue references: "issue 22", "issues 20 and 23", "(#27)", "#3553" — in comments only. */
const ISSUE_REFERENCE = /\bissues?\s+#?\d+|(?<![\w&/]|UAX )#\d{2,}\b/i;

function commentLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let inBlock = false;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (inBlock || line.startsWith('/*') || line.startsWith('*')) {
      out.push({ line: index + 1, text: line });
      inBlock = !line.includes('*/') && (inBlock || line.startsWith('/*'));
      return;
    }
    const slash = raw.indexOf('//');
    if (slash >= 0 && !/['"`][^'"`]*\/\//.test(raw.slice(0, slash + 2)))
      out.push({ line: index + 1, text: raw.slice(slash) });
  });
  return out;
}

describe('the house', () => {
  it('finds the sources it checks', () => {
    expect(files.length).toBeGreaterThan(200);
    expect(files.some((f) => f.endsWith('guard.ts'))).toBe(true);
  });

  it(`keeps every file under packages/*/src at most ${MAX_LINES} lines`, () => {
    const long = files
      .map((f) => ({ file: relative(root, f), lines: readFileSync(f, 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  it('names no issue number in a comment under packages/*/src (history lives in commits)', () => {
    const found: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const lines = /\.(sql|lua)$/.test(file)
        ? text
            .split('\n')
            .map((t, i) => ({ line: i + 1, text: t.includes('--') ? t.slice(t.indexOf('--')) : '' }))
        : commentLines(text);
      for (const { line, text: comment } of lines) {
        if (ISSUE_REFERENCE.test(comment)) found.push(`${relative(root, file)}:${line}: ${comment.trim()}`);
      }
    }
    expect(found).toEqual([]);
  });

  it('the issue-number check bites', () => {
    expect(ISSUE_REFERENCE.test('// see issue 22 for the history')).toBe(true);
    expect(ISSUE_REFERENCE.test('// (#27) moved here')).toBe(true);
    expect(ISSUE_REFERENCE.test('// the holder renews its lease')).toBe(false);
    expect(commentLines('const a = 1; // issue 9\n').map((c) => c.text)).toEqual(['// issue 9']);
  });
});
