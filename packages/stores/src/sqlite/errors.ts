// SQLite's and better-sqlite3's errors as the contract's: locked for busyTimeoutMs or broken is
// StoreUnavailableError, a missing table or a file that is no database StoreConfigurationError.
import {
  StoreConfigurationError,
  StoreInputError,
  StoreUnavailableError,
  ToolfenceError,
} from '@toolfence/core/store';

const STORE = 'SQLiteStore';

/** What a message names. */
export interface SQLiteSite {
  readonly path: string;
  readonly tableName: string;
  readonly busyTimeoutMs: number;
}

/** SQLITE_BUSY or SQLITE_LOCKED: another connection holds the lock; nothing was done. */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

export function toStoreError(operation: string, error: unknown, site: SQLiteSite): Error {
  if (ToolfenceError.isInstance(error)) return error as Error;
  const code = (error as { code?: unknown } | null)?.code;
  const message = String((error as Error | null)?.message ?? error);
  if (typeof code === 'string' && code.startsWith('SQLITE_')) {
    if (/no such table/i.test(message)) {
      return new StoreConfigurationError(
        STORE,
        `the table ${site.tableName} does not exist in ${site.path}: run \`await store.ensureSchema()\``,
        { cause: error },
      );
    }
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
      return new StoreUnavailableError(
        operation,
        `${STORE} ${site.path} stayed locked by another connection for busyTimeoutMs (${site.busyTimeoutMs} ms)`,
        // The write transaction never began (or was rolled back): nothing was written.
        { cause: error, outcome: 'not-applied' },
      );
    }
    if (code === 'SQLITE_NOTADB') {
      return new StoreConfigurationError(STORE, `${site.path} is not an SQLite database (${message})`, {
        cause: error,
      });
    }
    if (code === 'SQLITE_TOOBIG') return new StoreInputError('outcome', `too large for SQLite (${message})`);
    if (code === 'SQLITE_ERROR' || code.startsWith('SQLITE_CONSTRAINT') || code === 'SQLITE_MISUSE') {
      // A statement SQLite refuses for what it is: a bug, not an outage.
      return error as Error;
    }
    return new StoreUnavailableError(operation, `${STORE} ${site.path}: ${message} (${code})`, {
      cause: error,
    });
  }
  // better-sqlite3's own errors (e.g. the connection was closed) and anything unexpected.
  return new StoreUnavailableError(operation, `${STORE} ${site.path}: ${message}`, { cause: error });
}
