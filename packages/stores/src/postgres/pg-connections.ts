// What the store can tell about the `pool` it was given: a pg Pool (it can check out clients), a
// pg Client/PoolClient (it takes query configs), or a queryable of the caller's own; and the
// address to name in messages.
import type { Pool, PoolClient } from 'pg';
import type { PostgresQueryable } from './options.js';
import type { CheckedOutClient } from './pg-checkout.js';

/** A client checked out of a pg Pool for one session (ensureSchema's transaction). */
export interface SessionClient extends PostgresQueryable, CheckedOutClient {}

export function isPgPool(pool: unknown): pool is Pick<Pool, 'connect'> {
  return (
    typeof (pool as Partial<Pool>).connect === 'function' &&
    typeof (pool as Partial<PoolClient>).release !== 'function' &&
    typeof pool === 'object' &&
    pool !== null &&
    'totalCount' in pool
  );
}

/** pg's `Pool`, `Client` or `PoolClient`: they take `{ name, text, values }`. */
export function isPgQueryable(pool: unknown): boolean {
  return (
    isPgPool(pool) ||
    (typeof pool === 'object' &&
      pool !== null &&
      typeof (pool as Partial<PoolClient>).connect === 'function' &&
      'connectionParameters' in pool)
  );
}

/**
 * `host:port/database` of a pg `Pool`, `Client` or `PoolClient`, for error messages: never the
 * user or the password (rule S5). A queryable of your own is `a custom queryable`.
 */
export function describeAddress(pool: unknown): string {
  const source = pool as {
    options?: Record<string, unknown>;
    connectionParameters?: Record<string, unknown>;
  } | null;
  const settings = source?.connectionParameters ?? source?.options;
  if (settings === undefined || typeof settings !== 'object') return 'a custom queryable';
  let host = settings.host as string | undefined;
  let port = settings.port as number | string | undefined;
  let database = settings.database as string | undefined;
  const connectionString = settings.connectionString;
  if (typeof connectionString === 'string') {
    try {
      const url = new URL(connectionString);
      host = decodeURIComponent(url.hostname) || host;
      port = url.port || port;
      database = decodeURIComponent(url.pathname.slice(1)) || database;
    } catch {
      // Not a URL (a key=value string): fall back to the separate settings.
    }
  }
  host ||= process.env.PGHOST || 'localhost';
  port ||= process.env.PGPORT || 5432;
  database ||= process.env.PGDATABASE || '(default database)';
  return `${host}:${port}/${database}`;
}
