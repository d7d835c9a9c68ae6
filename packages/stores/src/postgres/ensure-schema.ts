// PostgresStore.ensureSchema: the migrations of sql/ applied in order, once, under an advisory lock.
import { StoreUnavailableError } from '@toolfence/core';
import { type PostgresNames, renderSql } from './identifiers.js';
import { checkOutClient } from './pg-checkout.js';
import { isPgPool, type SessionClient } from './pg-connections.js';
import { toStoreError } from './postgres-errors.js';
import type { EnsureSchemaResult, PostgresQueryable } from './postgres-options.js';
import type { Row } from './row-codec.js';
import { migrations, statements } from './sql-files.js';
import type { StatementRunner } from './statement-runner.js';

/** What ensureSchema works with. */
export interface SchemaTarget {
  readonly pool: PostgresQueryable;
  readonly names: PostgresNames;
  readonly runner: StatementRunner;
  readonly site: { readonly store: string; readonly table: string };
}

/** The one connection the migration transaction runs on, and what happened to it. */
interface Session {
  session: PostgresQueryable;
  client: SessionClient | undefined;
  /** The first error that leaves the connection unusable (it is then destroyed). */
  broken: unknown;
  readonly onClientError: (error: Error) => void;
}

function isConnectionLevel(error: unknown): boolean {
  return StoreUnavailableError.isInstance(toStoreError('ensureSchema', error, { store: '', table: '' }));
}

function unquotedSchema(names: PostgresNames): string {
  return names.schema.slice(1, -1).replaceAll('""', '"');
}

/** A client checked out of a pg Pool (each statement bounded), or the single connection given. */
async function openSession(target: SchemaTarget): Promise<Session> {
  const { pool, runner } = target;
  const state: Session = {
    session: pool,
    client: undefined,
    broken: undefined,
    // A checked-out pg client has no 'error' listener of the pool's: a connection dropped
    // before, between or after the statements of the transaction would otherwise be an unhandled
    // 'error' event. Attached at the hand-over (pg-checkout.ts), kept until the release.
    onClientError: (error: Error): void => {
      state.broken ??= error;
    },
  };
  if (!isPgPool(pool)) return state;
  const checkout = checkOutClient<SessionClient>(pool, state.onClientError);
  // A checkout that completes past the deadline is destroyed (its listener stays on).
  const client = await runner.withDeadline('ensureSchema', checkout, (late) => late.release(true));
  // Each statement of the migration transaction is bounded; one that timed out poisons the
  // connection, which is then destroyed instead of going back to the pool.
  state.session = {
    query: (text: string, values?: unknown[]) =>
      runner.withDeadline('ensureSchema', client.query(text, values)).catch((error: unknown) => {
        state.broken ??= error;
        throw error;
      }),
  };
  state.client = client;
  return state;
}

/** Inside the transaction: the schema, the migrations table, then each migration not yet applied. */
async function applyMigrations(session: PostgresQueryable, names: PostgresNames): Promise<number[]> {
  await session.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [names.lockName]);
  const schemaExists = await session.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [
    unquotedSchema(names),
  ]);
  // Only when missing: CREATE SCHEMA IF NOT EXISTS would need CREATE on the database even
  // when the schema is there.
  if (schemaExists.rows.length === 0) await session.query(`CREATE SCHEMA ${names.schema}`);
  await session.query(renderSql(statements.ensureMigrationsTable, names.placeholders));
  const done = await session.query(
    `SELECT version FROM ${names.placeholders.migrations_table} ORDER BY version`,
  );
  const appliedBefore = new Set((done.rows as Row[]).map((row) => Number(row.version)));
  const applied: number[] = [];
  for (const migration of migrations) {
    if (appliedBefore.has(migration.version)) continue;
    await session.query(renderSql(migration.text, names.placeholders));
    await session.query(
      `INSERT INTO ${names.placeholders.migrations_table} (version, name) VALUES ($1, $2)`,
      [migration.version, migration.name],
    );
    applied.push(migration.version);
  }
  return applied;
}

/** See PostgresStore.ensureSchema. */
export async function ensureSchema(target: SchemaTarget): Promise<EnsureSchemaResult> {
  target.runner.assertOpen('ensureSchema');
  let state: Session;
  try {
    state = await openSession(target);
  } catch (error) {
    throw toStoreError('ensureSchema', error, target.site);
  }
  const { session, client } = state;
  try {
    await session.query('BEGIN');
    try {
      const applied = await applyMigrations(session, target.names);
      await session.query('COMMIT');
      return { applied };
    } catch (error) {
      await session.query('ROLLBACK').catch((rollbackError: unknown) => {
        state.broken = rollbackError;
      });
      throw error;
    }
  } catch (error) {
    state.broken ??= isConnectionLevel(error) ? error : undefined;
    throw toStoreError('ensureSchema', error, target.site);
  } finally {
    const broken = state.broken;
    if (broken === undefined) {
      // Back to the pool healthy: release() puts the pool's own listener back in the same call.
      client?.removeListener('error', state.onClientError);
      client?.release();
    } else {
      // Destroyed: our listener stays on for whatever the dying socket still emits.
      client?.release(broken instanceof Error ? broken : true);
    }
  }
}
