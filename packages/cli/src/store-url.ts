// Where the records are: `--store` (or TOOLFENCE_STORE) names the store the application uses.
// Passwords never leave this file unmasked: every message the CLI prints goes through `mask`.
import { CliError, ExitCode } from './exit-codes.js';
import { Masker, maskUrl, secretsOf } from './secrets.js';

export type StoreKind = 'redis' | 'postgres' | 'sqlite';

/** A parsed `--store`. */
export interface StoreLocation {
  readonly kind: StoreKind;
  /** The URL or path to connect with (may hold a password: never print it, print `shown`). */
  readonly target: string;
  /** The location as it may be printed: the password and every secret parameter replaced by `***`. */
  readonly shown: string;
  /** Secrets to mask in any text printed (each in every form it may be printed in). */
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
    // As pg-connection-string does before parsing: a space or a stray `%` is encoded first.
    url = new URL(/ |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(location) ? encodeURI(location) : location);
  } catch {
    const scheme = /^([a-z][a-z0-9+.-]*:)/i.exec(location)?.[1] ?? '';
    // Unparsed, nothing of it is known to be safe to print but its scheme.
    throw new CliError(`--store is not a URL or sqlite:PATH (${scheme}…)`, ExitCode.usage);
  }
  const kind = kindOf(url.protocol);
  if (kind === undefined) {
    throw new CliError(
      `--store must be redis://, rediss://, postgres://, postgresql:// or sqlite:PATH, got ${url.protocol}//…`,
      ExitCode.usage,
    );
  }
  return { kind, target: location, shown: maskUrl(location), secrets: secretsOf(location) };
}

function kindOf(protocol: string): StoreKind | undefined {
  if (protocol === 'redis:' || protocol === 'rediss:') return 'redis';
  if (protocol === 'postgres:' || protocol === 'postgresql:') return 'postgres';
  return undefined;
}

/** `text` with every secret of `location` replaced by `***`, and any URL's credentials masked. */
export function mask(text: string, location: StoreLocation | undefined): string {
  const masker = new Masker();
  if (location !== undefined) masker.add(location.target);
  return masker.mask(text);
}
