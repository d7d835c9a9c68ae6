// HTML built from tagged templates: every interpolated value is escaped unless it is already
// `SafeHtml` (the output of another `html` template). Store text (tool names, tenants, error
// messages, descriptions) is attacker-influenced; it only ever enters a page through here.
import escapeHtml from 'escape-html';

/** A piece of HTML that is already safe to write out (built by {@link html}). */
export class SafeHtml {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

type Interpolation = SafeHtml | string | number | boolean | null | undefined | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  // escape-html escapes & < > " and ', so the result is safe as element text and inside a quoted
  // attribute value. Templates always quote their attributes.
  return escapeHtml(String(value));
}

/**
 * A tagged template that escapes what it interpolates: `html\`<td>${record.tool}</td>\``.
 * Arrays are joined; `null`, `undefined` and `false` render as nothing.
 */
export function html(strings: TemplateStringsArray, ...values: readonly Interpolation[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let index = 0; index < values.length; index += 1) {
    out += render(values[index] as Interpolation) + (strings[index + 1] ?? '');
  }
  return new SafeHtml(out);
}

/** A link target inside the console: the base path, a route and its query, already encoded. */
export function href(
  basePath: string,
  route: string,
  query: Record<string, string | undefined> = {},
): string {
  const parameters = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') parameters.set(name, value);
  }
  const search = parameters.toString();
  const base = basePath === '/' ? '' : basePath;
  return `${base}${route}${search === '' ? '' : `?${search}`}`;
}
