// The palette keeps WCAG AA contrast (4.5:1) for every text colour on the background it is used on.
import { describe, expect, it } from 'vitest';
import { STYLESHEET, STYLESHEET_PATH } from './stylesheet.js';

function palette(block: string): Record<string, string> {
  return Object.fromEntries(
    [...block.matchAll(/--([a-z-]+): (#[0-9a-f]{6})/g)].map((m) => [m[1] as string, m[2] as string]),
  );
}

function luminance(hex: string): number {
  const channel = (offset: number) => {
    const value = Number.parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

// Text colour on background, as the stylesheet pairs them.
const PAIRS: [string, string][] = [
  ['fg', 'bg'],
  ['fg', 'panel'],
  ['muted', 'bg'],
  ['muted', 'panel'],
  ['accent', 'bg'],
  ['accent', 'panel'],
  ['bg', 'accent'],
  ['bg', 'bad'],
  ['bad', 'bad-bg'],
  ['warn', 'warn-bg'],
  ['ok', 'ok-bg'],
  ['fg', 'bad-bg'],
  ['fg', 'warn-bg'],
  ['fg', 'ok-bg'],
];

describe('the stylesheet', () => {
  it.each([
    ['light', palette(STYLESHEET.slice(0, STYLESHEET.indexOf('@media')))],
    ['dark', palette(STYLESHEET.slice(STYLESHEET.indexOf('@media')))],
  ])('keeps 4.5:1 contrast in the %s scheme', (_scheme, colours) => {
    expect(Object.keys(colours)).toHaveLength(12);
    const low = PAIRS.map(
      ([text, background]) =>
        [text, background, contrast(colours[text] as string, colours[background] as string)] as const,
    ).filter(([, , ratio]) => ratio < 4.5);
    expect(low).toEqual([]);
  });

  it('is served at a path named by its content', () => {
    expect(STYLESHEET_PATH).toMatch(/^\/assets\/console\.[0-9a-f]{12}\.css$/);
    expect(STYLESHEET).not.toContain('url(');
  });
});
