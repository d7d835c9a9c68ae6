// PostgresStore.ensureSchema: the migrations of sql/ applied in order, once, under an advisory
// lock, each in its own transaction, with the online steps of a migration (migration-steps.ts)
// after it. Migration statements have the migration's own deadline (`timeoutMs`, default none),
// not the store's per-operation one: a 3,000,000-row table at 0003 took longer than 5 s to upgrade,
// every ensureSchema() rolled back, and every claim then failed.
import { StoreUnavailableError } from '@toolfence/core/store';
import type { StatementRunner } from './backend.js';
import { toStoreError } from './errors.js';
import { type MigrationPlan, type OnlineStep, planMigration } from './migration-steps.js';
import { type PostgresNames, renderSql } from './names.js';
import type {
  EnsureSchemaOptions,
  EnsureSchemaResult,
  MigrationProgress,
  PostgresQueryable,
} from './options.js';
import { checkOutClient } from './pg-checkout.js';
import { isPgPool, type SessionClient } from './pg-connections.js';
import type { Row } from './record-codec.js';
import { migrations, statements } from './statements.js';

/** What ensureSchema works with. */
export interface SchemaTarget {
  readonly pool: PostgresQueryable;
  readonly names: PostgresNames;
  readonly runner: StatementRunner;
  readonly site: { readonly store: string; readonly table: string };
}

/** Rows per transaction of a batched online step, unless the caller sets `batchSize`. */
const DEFAULT_BATCH_SIZE = 5_000;

const plans = new Map<number, MigrationPlan>(
  migrations.map((migration) => [migration.version, planMigration(migration.text, `${migration.name}.sql`)]),
);

/** The one connection the migrations run on, and what happened to it. */
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

function unquoted(identifier: string): string {
  return identifier.slice(1, -1).replaceAll('""', '"');
}

/**
 * The migration deadline: undefined, or the performance.now() by which the whole call must be
 * done. Past it a statement rejects and its connection is destroyed (the server rolls back what
 * it was doing; committed steps stay, and the next call resumes after them).
 */
function bounded<T>(
  pending: Promise<T>,
  deadline: number | undefined,
  timeoutMs: number | undefined,
  store: string,
): Promise<T> {
  if (deadline === undefined) return pending;
  const remaining = deadline - performance.now();
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new StoreUnavailableError(
            'ensureSchema',
            `${store}: the migration did not finish within timeoutMs (${timeoutMs} ms); the next ensureSchema() resumes it`,
          ),
        ),
      Math.max(0, remaining),
    );
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** A client checked out of a pg Pool (checkout bounded by operationTimeoutMs), or the single connection given. */
async function openSession(
  target: SchemaTarget,
  deadline: number | undefined,
  timeoutMs: number | undefined,
): Promise<Session> {
  const { pool, runner } = target;
  const state: Session = {
    session: pool,
    client: undefined,
    broken: undefined,
    // A checked-out pg client has no 'error' listener of the pool's: a connection dropped
    // before, between or after the statements of the migration would otherwise be an unhandled
    // 'error' event. Attached at the hand-over (pg-checkout.ts), kept until the release.
    onClientError: (error: Error): void => {
      state.broken ??= error;
    },
  };
  const session = (queryable: PostgresQueryable): PostgresQueryable => ({
    query: (text: string, values?: unknown[]) =>
      bounded(queryable.query(text, values), deadline, timeoutMs, target.site.store).catch(
        (error: unknown) => {
          // A statement that failed at the connection (or timed out) poisons it: destroyed, never reused.
          if (isConnectionLevel(error)) state.broken ??= error;
          throw error;
        },
      ),
  });
  if (!isPgPool(pool)) {
    state.session = session(pool);
    return state;
  }
  const checkout = checkOutClient<SessionClient>(pool, state.onClientError);
  // A checkout that completes past the deadline is destroyed (its listener stays on).
  const client = await runner.withDeadline('ensureSchema', checkout, (late) => late.release(true));
  state.session = session(client);
  state.client = client;
  return state;
}

/** The schema and the migrations table, and the versions already applied (one transaction). */
async function appliedVersions(session: PostgresQueryable, names: PostgresNames): Promise<Set<number>> {
  await session.query('BEGIN');
  try {
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
    await session.query('COMMIT');
    return new Set((done.rows as Row[]).map((row) => Number(row.version)));
  } catch (error) {
    await session.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

function recordStatement(names: PostgresNames): string {
  return `INSERT INTO ${names.placeholders.migrations_table} (version, name) VALUES ($1, $2) ON CONFLICT (version) DO NOTHING`;
}

/** One online step, to its end; resumable (every step is). */
async function runStep(
  session: PostgresQueryable,
  names: PostgresNames,
  step: OnlineStep,
  options: EnsureSchemaOptions,
  report: (progress: Omit<MigrationProgress, 'version' | 'name'>) => void,
): Promise<void> {
  if (step.kind === 'statement') {
    report({ step: step.label, phase: 'start' });
    // A DROP INDEX CONCURRENTLY waits for older snapshots as a build does (below): the same trade.
    const concurrent = /\bCONCURRENTLY\s+/.test(step.text);
    const text =
      concurrent && (await isSmall(session, names)) ? step.text.replace(/\bCONCURRENTLY\s+/, '') : step.text;
    await session.query(renderSql(text, names.placeholders));
    report({ step: step.label, phase: 'done' });
    return;
  }
  if (step.kind === 'index') {
    const index = names.placeholders[step.label];
    if (index === undefined) throw new Error(`PostgresStore: unknown index placeholder ${step.label}`);
    report({ step: `index ${unquoted(index)}`, phase: 'start' });
    // An interrupted CREATE INDEX CONCURRENTLY leaves an INVALID index that IF NOT EXISTS would
    // then take for done: drop it and build again.
    const found = await session.query(
      `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
      [unquotedSchema(names), unquoted(index)],
    );
    if (found.rows.length > 0 && (found.rows[0] as Row).valid !== true) {
      await session.query(`DROP INDEX CONCURRENTLY IF EXISTS ${names.schema}.${index}`);
    }
    // CONCURRENTLY waits for every transaction of the database that holds an older snapshot,
    // whatever table it touches: on a small table a plain build (a SHARE lock for milliseconds)
    // is the better trade, and a new database never waits for the application's transactions.
    const text = (await isSmall(session, names)) ? step.text.replace(/\bCONCURRENTLY\s+/, '') : step.text;
    await session.query(renderSql(text, names.placeholders));
    report({ step: `index ${unquoted(index)}`, phase: 'done' });
    return;
  }
  // batched: each batch its own transaction (autocommit), until one changes nothing.
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const text = renderSql(step.text.replaceAll('{{batch_limit}}', String(batchSize)), names.placeholders);
  const estimate = await session.query(
    'SELECT greatest(reltuples, 0)::bigint AS rows FROM pg_class WHERE oid = $1::regclass',
    [names.table],
  );
  let totalRows = Number((estimate.rows[0] as Row | undefined)?.rows ?? 0);
  // Never analyzed (a table loaded at once): count it, once; this path is the migration's, not a call's.
  if (totalRows <= 0) {
    totalRows = Number(
      ((await session.query(`SELECT count(*) AS rows FROM ${names.table}`)).rows[0] as Row).rows,
    );
  }
  let rows = 0;
  report({ step: step.label, phase: 'start', rows, totalRows });
  for (;;) {
    const result = await session.query(text);
    const changed = result.rowCount ?? 0;
    if (changed === 0) break;
    rows += changed;
    report({ step: step.label, phase: 'progress', rows, totalRows });
  }
  report({ step: step.label, phase: 'done', rows, totalRows });
}

/** Below this many rows an index is built in one plain statement (see runStep). */
const SMALL_TABLE_ROWS = 100_000;

async function isSmall(session: PostgresQueryable, names: PostgresNames): Promise<boolean> {
  const counted = await session.query(
    `SELECT count(*)::int AS rows FROM (SELECT 1 FROM ${names.table} LIMIT ${SMALL_TABLE_ROWS}) AS sample`,
  );
  return Number((counted.rows[0] as Row).rows) < SMALL_TABLE_ROWS;
}

/** Every migration not yet recorded, in order: its transaction, then its online steps. */
async function applyMigrations(
  session: PostgresQueryable,
  names: PostgresNames,
  options: EnsureSchemaOptions,
): Promise<number[]> {
  const before = await appliedVersions(session, names);
  const applied: number[] = [];
  for (const migration of migrations) {
    if (before.has(migration.version)) continue;
    const plan = plans.get(migration.version)!;
    const report = (progress: Omit<MigrationProgress, 'version' | 'name'>) =>
      options.onProgress?.({ version: migration.version, name: migration.name, ...progress });
    report({ step: 'transaction', phase: 'start' });
    await session.query('BEGIN');
    try {
      await session.query(renderSql(plan.head, names.placeholders));
      if (plan.steps.length === 0) {
        await session.query(recordStatement(names), [migration.version, migration.name]);
      }
      await session.query('COMMIT');
    } catch (error) {
      await session.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
    report({ step: 'transaction', phase: 'done' });
    if (plan.steps.length > 0) {
      for (const step of plan.steps) await runStep(session, names, step, options, report);
      await session.query(recordStatement(names), [migration.version, migration.name]);
    }
    applied.push(migration.version);
  }
  return applied;
}

/** Pause between tries of the migration lock while another process migrates. */
const LOCK_RETRY_MS = 100;

/**
 * Session-level: held across the migrations' transactions and online steps; it conflicts with
 * the transaction-level lock of earlier versions' ensureSchema on the same key. Tried, not
 * waited for: a session blocked in pg_advisory_lock holds a snapshot, and CREATE INDEX
 * CONCURRENTLY in the migrating session waits for every such snapshot, which is waiting for it
 * (a deadlock, seen with 20 processes at once). Between tries this session holds nothing.
 */
async function takeLock(session: PostgresQueryable, lockName: string): Promise<void> {
  for (;;) {
    const tried = await session.query('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked', [
      lockName,
    ]);
    if ((tried.rows[0] as Row).locked === true) return;
    await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
  }
}

/** Checks the options of ensureSchema. @throws RangeError */
function checkOptions(options: EnsureSchemaOptions): void {
  const { timeoutMs, batchSize } = options;
  if (
    timeoutMs !== undefined &&
    (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2_147_483_647)
  ) {
    throw new RangeError(
      `ensureSchema: timeoutMs must be a whole number of milliseconds in 1..2147483647, got ${String(timeoutMs)}`,
    );
  }
  if (
    batchSize !== undefined &&
    (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > 1_000_000)
  ) {
    throw new RangeError(
      `ensureSchema: batchSize must be a whole number in 1..1000000, got ${String(batchSize)}`,
    );
  }
}

/** See PostgresStore.ensureSchema. */
export async function ensureSchema(
  target: SchemaTarget,
  options: EnsureSchemaOptions = {},
): Promise<EnsureSchemaResult> {
  checkOptions(options);
  target.runner.assertOpen('ensureSchema');
  const deadline = options.timeoutMs === undefined ? undefined : performance.now() + options.timeoutMs;
  let state: Session;
  try {
    state = await openSession(target, deadline, options.timeoutMs);
  } catch (error) {
    throw toStoreError('ensureSchema', error, target.site);
  }
  const { session, client } = state;
  let locked = false;
  try {
    await takeLock(session, target.names.lockName);
    locked = true;
    return { applied: await applyMigrations(session, target.names, options) };
  } catch (error) {
    state.broken ??= isConnectionLevel(error) ? error : undefined;
    throw toStoreError('ensureSchema', error, target.site);
  } finally {
    if (locked && state.broken === undefined) {
      await session
        .query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [target.names.lockName])
        .catch((unlockError: unknown) => {
          state.broken = unlockError;
        });
    }
    const broken = state.broken;
    if (client !== undefined) {
      if (broken === undefined) {
        // Back to the pool healthy: release() puts the pool's own listener back in the same call.
        client.removeListener('error', state.onClientError);
        client.release();
      } else {
        // Destroyed (its session lock goes with it): our listener stays on for what it still emits.
        client.release(broken instanceof Error ? broken : true);
      }
    }
  }
}
