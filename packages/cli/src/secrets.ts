// What a connection string can hide a secret in, found by its structure (WHATWG URL, as ioredis
// and pg-connection-string parse it): the userinfo password and every query parameter whose name
// says it carries a credential (`password`, `sslpassword`, `sslkey`, `token`, ...). Each secret is
// kept in every form it can be printed in (as typed, decoded, re-encoded, JSON-escaped), so a
// driver's message that echoes it is scrubbed as well as our own lines.

/** Query parameters (and `name=value` pairs in text) whose value is a credential or names one. */
const SENSITIVE_NAME = /pass|pwd|secret|token|key|auth|cred|signature|cert/i;

/** A URL in a line of text: a scheme, `://`, then anything up to white space or a quote. */
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]*/gi;

/** `password=…` (also `sslpassword=`, `token=`, …) outside a URL, as libpq-style text writes it. */
const PAIR_IN_TEXT =
  /\b([a-z_]*(?:pass|pwd|secret|token|sslkey|auth)[a-z_]*)=("[^"]*"|'[^']*'|[^\s&;,]*[^\s&;,:.)\]])/gi;

export const MASK = '***';

function decode(text: string, plusIsSpace: boolean): string {
  try {
    return decodeURIComponent(plusIsSpace ? text.replaceAll('+', ' ') : text);
  } catch {
    return text;
  }
}

/**
 * Every form `raw` (as typed in a URL) may be printed in. Both readings of `+` (a space in a query,
 * itself in userinfo) are kept: which one a driver uses is its own business.
 */
function formsOf(raw: string): string[] {
  const forms = new Set([
    raw,
    raw.replace(/%[0-9a-f]{2}/gi, (sequence) => sequence.toUpperCase()),
    raw.replace(/%[0-9A-F]{2}/g, (sequence) => sequence.toLowerCase()),
  ]);
  for (const decoded of [decode(raw, false), decode(raw, true)]) {
    forms.add(decoded);
    forms.add(encodeURIComponent(decoded));
    forms.add(new URLSearchParams({ v: decoded }).toString().slice(2));
  }
  for (const form of [...forms]) forms.add(JSON.stringify(form).slice(1, -1));
  return [...forms].filter((form) => form !== '');
}

/** The authority of `text` (`scheme://AUTHORITY/...`), where it starts, and its userinfo. */
function splitAuthority(text: string): { start: number; authority: string } | undefined {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text);
  if (scheme === null) return undefined;
  const start = scheme[0].length;
  const end = text.slice(start).search(/[/?#]/);
  return { start, authority: end === -1 ? text.slice(start) : text.slice(start, start + end) };
}

/** The secrets of one connection string (empty when it holds none), in every printable form. */
export function secretsOf(location: string): string[] {
  const secrets: string[] = [];
  const parts = splitAuthority(location);
  if (parts !== undefined) {
    const at = parts.authority.lastIndexOf('@');
    const userinfo = at === -1 ? '' : parts.authority.slice(0, at);
    const colon = userinfo.indexOf(':');
    if (colon !== -1) secrets.push(...formsOf(userinfo.slice(colon + 1)));
  }
  const query = location.indexOf('?');
  if (query !== -1) {
    const hash = location.indexOf('#', query);
    const search = location.slice(query + 1, hash === -1 ? undefined : hash);
    for (const pair of search.split('&')) {
      const equals = pair.indexOf('=');
      if (equals === -1) continue;
      if (SENSITIVE_NAME.test(decode(pair.slice(0, equals), true))) {
        secrets.push(...formsOf(pair.slice(equals + 1)));
      }
    }
  }
  return [...new Set(secrets)].filter((secret) => secret !== '');
}

/**
 * `location` as it may be printed: the userinfo password and every sensitive parameter's value
 * replaced by `***`, everything else as typed. The username stays (it says which login was used).
 */
export function maskUrl(location: string): string {
  let shown = location;
  const parts = splitAuthority(location);
  if (parts !== undefined) {
    const at = parts.authority.lastIndexOf('@');
    const userinfo = at === -1 ? '' : parts.authority.slice(0, at);
    const colon = userinfo.indexOf(':');
    if (colon !== -1) {
      const userEnd = parts.start + colon + 1;
      shown = `${location.slice(0, userEnd)}${MASK}${location.slice(parts.start + at)}`;
    }
  }
  const query = shown.indexOf('?');
  if (query === -1) return shown;
  const hash = shown.indexOf('#', query);
  const search = shown.slice(query + 1, hash === -1 ? undefined : hash);
  const masked = search
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      return equals !== -1 && SENSITIVE_NAME.test(decode(pair.slice(0, equals), true))
        ? `${pair.slice(0, equals + 1)}${MASK}`
        : pair;
    })
    .join('&');
  // A fragment may carry anything: never printed.
  return `${shown.slice(0, query + 1)}${masked}${hash === -1 ? '' : '#…'}`;
}

/**
 * Every secret the CLI could print, and the masking of a line. Fed with the store location, the
 * process arguments and the environment variables that hold connection strings, before anything
 * is printed.
 */
export class Masker {
  private secrets: string[] = [];

  /** Adds the secrets of a connection string, or a secret value as it is. */
  add(text: string | undefined, kind: 'url' | 'value' = 'url'): void {
    if (text === undefined || text === '') return;
    const found = kind === 'url' ? secretsOf(text) : formsOf(text);
    // Longest first: a secret that contains another is replaced whole.
    this.secrets = [...new Set([...this.secrets, ...found])].sort((a, b) => b.length - a.length);
  }

  /** `text` with every known secret replaced by `***`. */
  maskKnown(text: string): string {
    let masked = text;
    for (const secret of this.secrets) masked = masked.split(secret).join(MASK);
    return masked;
  }

  /** `text` with every known secret, every URL's credentials and every `password=` value masked. */
  mask(text: string): string {
    const masked = this.maskKnown(text).replace(URL_IN_TEXT, (found) => {
      // A URL does not end with the punctuation of the sentence around it.
      const url = found.replace(/[:;,.)\]]+$/, '');
      return `${maskUrl(url)}${found.slice(url.length)}`;
    });
    return masked.replace(PAIR_IN_TEXT, (_pair, name: string) => `${name}=${MASK}`);
  }
}

/** Environment variables that hold a store's connection string or password. */
export const SECRET_ENV_URLS = ['TOOLFENCE_STORE', 'REDIS_URL', 'DATABASE_URL'] as const;
export const SECRET_ENV_VALUES = ['PGPASSWORD', 'PGSSLPASSWORD', 'REDIS_PASSWORD', 'REDISCLI_AUTH'] as const;

/** A masker that knows every secret of `argv` and `env`. */
export function maskerFor(argv: readonly string[], env: NodeJS.ProcessEnv): Masker {
  const masker = new Masker();
  for (const name of SECRET_ENV_URLS) masker.add(env[name]);
  for (const name of SECRET_ENV_VALUES) masker.add(env[name], 'value');
  for (const arg of argv) {
    // `--store=URL` and `--store URL` alike; only connection strings (a reason's `?x=1` is not one).
    const value = arg.replace(/^--[a-z-]+=/, '');
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) masker.add(value);
  }
  return masker;
}
