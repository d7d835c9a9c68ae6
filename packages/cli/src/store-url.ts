// Where the records are: `--store` (or TOOLFENCE_STORE) names the store the application uses.
// Passwords never leave this file unmasked: every message the CLI prints goes through `mask`.
import { CliError, ExitCode } from './exit-codes.js';

export type StoreKind = 'redis' | 'postgres' | 'sqlite';

/** A parsed `--store`. */
export interface StoreLocation {
  readonly kind: StoreKind;
  /** The URL or path to connect with (may hold a password: never print it, print `shown`). */
  readonly target: string;
  /** The location as it may be printed: the password replaced by `***`. */
  readonly shown: string;
  /** Secrets to mask in any text printed (the password, raw and URL-encoded). */
  readonly secrets: readonly string[];
}

const MEMORY_REFUSED =
  'a MemoryStore lives inside one process: no other process (this CLI included) can see its records. ' +
  'Point --store (or TOOLFENCE_STORE) at the Redis, PostgreSQL or SQLite store your application uses.';

/** @throws CliError (usage) for a location that names no store the CLI can open. */
export function parseStoreLocation(location: string | undefined): StoreLocation {
  if (location === undefined || location.trim() === '') {
    throw new CliError(
      'no store: pass --store redis://…, postgres://… or sqlite:PATH, or set TOOLFENCE_STORE',
      ExitCode.usage,
    );
  }
  if (/^memory(:|$)/i.test(location)) throw new CliError(MEMORY_REFUSED, ExitCode.usage);
  if (/^sqlite:/i.test(location)) {
    const path = location.replace(/^sqlite:(\/\/)?/i, '');
    if (path === '') throw new CliError('sqlite: needs a path, e.g. sqlite:./records.db', ExitCode.usage);
    return { kind: 'sqlite', target: path, shown: `sqlite:${path}`, secrets: [] };
  }
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    throw new CliError(`--store is not a URL or sqlite:PATH (${maskLoose(location)})`, ExitCode.usage);
  }
  const kind = kindOf(url.protocol);
  if (kind === undefined) {
    throw new CliError(
      `--store must be redis://, rediss://, postgres://, postgresql:// or sqlite:PATH, got ${url.protocol}//…`,
      ExitCode.usage,
    );
  }
  const secrets = url.password === '' ? [] : [url.password, safeDecode(url.password)];
  const shownUrl = new URL(location);
  if (shownUrl.password !== '') shownUrl.password = '***';
  return { kind, target: location, shown: shownUrl.toString(), secrets };
}

function kindOf(protocol: string): StoreKind | undefined {
  if (protocol === 'redis:' || protocol === 'rediss:') return 'redis';
  if (protocol === 'postgres:' || protocol === 'postgresql:') return 'postgres';
  return undefined;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A location that did not even parse: hide everything between `//` and `@`. */
function maskLoose(text: string): string {
  return text.replace(/\/\/[^@/]*@/, '//***@');
}

/** `text` with every secret of `location` replaced by `***`. */
export function mask(text: string, location: StoreLocation | undefined): string {
  let masked = text;
  for (const secret of location?.secrets ?? []) {
    if (secret !== '') masked = masked.split(secret).join('***');
  }
  return maskLoose(masked);
}
