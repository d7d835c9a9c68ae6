import { StoreUnavailableError } from '@toolfence/core';

/**
 * SQLSTATE classes and codes that mean "the database cannot serve us now" rather than "this
 * statement is wrong": connection exceptions (08), invalid authorisation (28), transaction
 * rollback — serialisation failure, deadlock (40), insufficient resources (53), operator
 * intervention — shutdown, statement_timeout, cancel (57), system errors (58), internal errors
 * (XX), a read-only transaction (25006: a standby, e.g. right after a failover), a lock timeout
 * (55P03) and a database that does not exist (3D000).
 */
const unavailableClasses = new Set(['08', '28', '40', '53', '57', '58', 'XX']);
const unavailableCodes = new Set(['25006', '55P03', '3D000']);

/** Errors Node's sockets and DNS raise when a server cannot be reached. */
const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
]);

/** Messages node-postgres (pg, pg-pool) uses for a connection that failed, ended or timed out. */
const driverConnectionMessages =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|Cannot use a pool after calling end|does not support SSL|connection timeout/i;

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * True when `error` says the database is unreachable, overloaded, shutting down, timed out or
 * read-only: an infrastructure failure the contract reports as `StoreUnavailableError`.
 * A statement the server rejects for what it is (a syntax error, a missing table, a permission,
 * a constraint) is a bug or a misconfiguration and is NOT one of these.
 */
export function isUnavailableError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = errorCode(error);
  if (code !== undefined && /^[0-9A-Z]{5}$/.test(code) && 'severity' in error) {
    return unavailableClasses.has(code.slice(0, 2)) || unavailableCodes.has(code);
  }
  if (code !== undefined && networkCodes.has(code)) return true;
  if (error instanceof AggregateError && error.errors.some((inner) => isUnavailableError(inner))) return true;
  return error instanceof Error && driverConnectionMessages.test(error.message);
}

/**
 * Maps a failure of one store operation to what the store throws:
 * - infrastructure failures (see {@link isUnavailableError}) → `StoreUnavailableError` with the
 *   driver's error as `cause`, so the guard fails closed and callers can retry later;
 * - a missing records table → an `Error` saying to run `ensureSchema()`;
 * - anything else (SQL the server rejects, a bug) → rethrown unchanged, so it is seen for what it
 *   is. (The guard still fails closed on it: it never reads an error as permission.)
 */
export function toStoreError(operation: string, error: unknown, tableName: string): unknown {
  if (StoreUnavailableError.isInstance(error)) return error;
  if (isUnavailableError(error)) {
    const reason = error instanceof Error ? error.message || errorCode(error) || error.name : String(error);
    return new StoreUnavailableError(operation, `PostgreSQL: ${reason}`, { cause: error });
  }
  const code = errorCode(error);
  if (code === '42P01' || code === '3F000') {
    return new Error(
      `PostgresStore.${operation}: ${tableName} does not exist; run \`await store.ensureSchema()\` first`,
      { cause: error },
    );
  }
  return error;
}
