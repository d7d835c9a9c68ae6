import { StoreConfigurationError, StoreInputError, StoreUnavailableError } from '@toolfence/core/store';

/**
 * What a failure of one PostgreSQL statement means, by SQLSTATE (PostgreSQL manual, appendix A):
 *
 * - `unavailable`: the database cannot serve us now and a later try may succeed: connection
 *   exceptions (08), serialisation failure and deadlock (40), insufficient resources (53, e.g.
 *   too many connections), operator intervention (57: shutdown, `statement_timeout`, cancel),
 *   system and internal errors (58, XX), a lock timeout (55P03), and a server that is starting
 *   up or shutting down.
 * - `input`: the values the store was given cannot be stored: data exceptions (22, e.g. 22021 a
 *   NUL in text, 22P05 untranslatable character, 22003 out of range) and program limits (54,
 *   e.g. an index row too large for a very long name). Nothing was written: the statement failed.
 * - `configuration`: the store's own statement is refused for a reason no retry fixes: a missing
 *   table or schema (42P01, 3F000: run `ensureSchema()`), a schema older than the store (42703,
 *   42883), a permission (42501), a read-only transaction (25006: a standby), a failed
 *   authentication (28), a database that does not exist (3D000), and any other syntax or rule
 *   error (42, the rest of 2x): a bug or a schema of another version.
 */
export type PostgresFailureKind = 'unavailable' | 'input' | 'configuration';

const unavailableClasses = new Set(['08', '40', '53', '57', '58', 'XX']);
const unavailableCodes = new Set(['55P03', '55000']);
const inputClasses = new Set(['22', '54']);
const missingSchemaCodes = new Set(['42P01', '3F000']);
const outdatedSchemaCodes = new Set(['42703', '42883']);

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
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|Cannot use a pool after calling end|does not support SSL|connection timeout|Client was closed/i;

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The SQLSTATE of an error the server sent (pg's DatabaseError carries `severity`), else undefined. */
export function sqlState(error: unknown): string | undefined {
  const code = errorCode(error);
  if (code === undefined || typeof error !== 'object' || error === null) return undefined;
  return /^[0-9A-Z]{5}$/.test(code) && 'severity' in error ? code : undefined;
}

/** How a failure is reported, or undefined when it is not PostgreSQL's (a bug of a wrapper: rethrown). */
export function classifyFailure(error: unknown): PostgresFailureKind | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const state = sqlState(error);
  if (state !== undefined) {
    const stateClass = state.slice(0, 2);
    if (unavailableClasses.has(stateClass) || unavailableCodes.has(state)) return 'unavailable';
    if (inputClasses.has(stateClass)) return 'input';
    return 'configuration';
  }
  const code = errorCode(error);
  if (code !== undefined && networkCodes.has(code)) return 'unavailable';
  if (error instanceof AggregateError && error.errors.some((inner) => isUnavailableError(inner))) {
    return 'unavailable';
  }
  if (error instanceof Error && driverConnectionMessages.test(error.message)) return 'unavailable';
  return undefined;
}

/** True when `error` says the database is unreachable, overloaded, shutting down or timed out. */
export function isUnavailableError(error: unknown): boolean {
  return classifyFailure(error) === 'unavailable';
}

/** Where a failure happened, for messages: the store, its address (never credentials), its table. */
export interface FailureSite {
  /** e.g. `PostgresStore at 127.0.0.1:5432/test`. */
  readonly store: string;
  /** The quoted table name. */
  readonly table: string;
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const state = sqlState(error);
  const text = error.message || errorCode(error) || error.name;
  return state === undefined ? text : `${text} (SQLSTATE ${state})`;
}

/** Errors raised before a statement could be sent: no connection was made. */
const notSentCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const notSentMessages =
  /timeout exceeded when trying to connect|Cannot use a pool after calling end|does not support SSL/i;

/**
 * Whether a failed statement may have been applied: an error the server sent
 * (a SQLSTATE) means the statement failed and its transaction rolled back; a connection never
 * made sent nothing; a connection that ended or timed out with the statement in flight may have
 * committed it.
 */
function failureOutcome(error: unknown): 'not-applied' | 'unknown' {
  if (sqlState(error) !== undefined) return 'not-applied';
  const code = errorCode(error);
  if (code !== undefined && notSentCodes.has(code)) return 'not-applied';
  if (
    error instanceof AggregateError &&
    error.errors.length > 0 &&
    error.errors.every((inner) => failureOutcome(inner) === 'not-applied')
  ) {
    return 'not-applied';
  }
  if (error instanceof Error && notSentMessages.test(error.message)) return 'not-applied';
  return 'unknown';
}

/**
 * Maps a failure of one store operation to what the store throws (rule S1, S5, G6):
 * - `unavailable` → `StoreUnavailableError` naming the operation, the store and its address;
 * - `input` → `StoreInputError` (the guard never retries it: the same values fail again);
 * - `configuration` → `StoreConfigurationError` naming the fix (`ensureSchema()` for a missing or
 *   older table);
 * - anything that is not PostgreSQL's (a wrapper's own bug) → rethrown unchanged.
 * The driver's error is always the `cause`.
 */
export function toStoreError(operation: string, error: unknown, site: FailureSite): unknown {
  if (
    StoreUnavailableError.isInstance(error) ||
    StoreInputError.isInstance(error) ||
    StoreConfigurationError.isInstance(error)
  ) {
    return error;
  }
  const kind = classifyFailure(error);
  const reason = reasonOf(error);
  switch (kind) {
    case 'unavailable':
      return new StoreUnavailableError(operation, `${site.store}: ${reason}`, {
        cause: error,
        outcome: failureOutcome(error),
      });
    case 'input':
      return new StoreInputError(
        'value',
        `PostgreSQL refused a value of ${operation} (${site.store}): ${reason}`,
        { cause: error },
      );
    case 'configuration': {
      const state = sqlState(error) ?? '';
      let remedy = '';
      if (missingSchemaCodes.has(state)) {
        remedy = `: ${site.table} does not exist; run \`await store.ensureSchema()\` first`;
      } else if (outdatedSchemaCodes.has(state)) {
        remedy = `: ${site.table} is older than this store; run \`await store.ensureSchema()\``;
      } else if (state === '42501') {
        remedy = ': the role lacks a privilege on the table (grant SELECT, INSERT, UPDATE, DELETE)';
      } else if (state === '25006') {
        remedy = ': the connection is read-only (a standby?); point the pool at the primary';
      }
      return new StoreConfigurationError(site.store, `${operation} failed${remedy} — ${reason}`, {
        cause: error,
      });
    }
    default:
      return error;
  }
}
