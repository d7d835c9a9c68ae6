// Issue 27, item 6: a settlement that hits operationTimeoutMs on PostgreSQL (another connection
// holds the record's row lock past it) has an UNKNOWN result: the statement keeps waiting on the
// lock server-side and lands once the lock is released. The guard's error says so
// (`StoreUnavailableError.outcome === 'unknown'`), the CLI exits 4 ("inspect and look"), the
// console answers "Result unknown: reload the record and look", never "Nothing was changed; try
// again". A connection that is refused is `not-applied` (CLI exit 3).
import { createServer } from 'node:http';
import { createConsoleHandler } from '@toolfence/console';
import { Guard, type IdempotencyRecord, StoreUnavailableError } from '@toolfence/core';
import { PostgresStore } from '@toolfence/stores/postgres';
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  authorizeByHeader,
  ConsoleClient,
  close,
  formFields,
  listen,
  recordPath,
  stopCall,
} from '../support/console.js';
import {
  createPool,
  databaseUrl,
  dropSchema,
  holdClient,
  requirePostgres,
  uniqueSchemaName,
} from '../support/postgres.js';
import { runCli } from '../support/run-cli.js';
import { waitFor } from '../support/wait-for.js';

const schema = uniqueSchemaName('unknown_result');
const tenant = 'tenant-a';
const OPERATION_TIMEOUT_MS = 500;
let pool: pg.Pool;
let store: PostgresStore;
let guard: Guard;

beforeAll(async () => {
  await requirePostgres();
  pool = createPool({ max: 4 });
  store = new PostgresStore({ pool, schema, operationTimeoutMs: OPERATION_TIMEOUT_MS });
  await store.ensureSchema();
  guard = new Guard({ store, tenant });
});

afterAll(async () => {
  await store.close();
  await pool.end();
  await dropSchema(schema);
});

/** Another connection's open transaction holding the record's row lock. */
async function holdRow(key: string): Promise<pg.PoolClient> {
  const writer = await holdClient(pool);
  await writer.query('BEGIN');
  await writer.query(`SELECT 1 FROM ${store.tableName} WHERE tenant = $1 AND key = $2 FOR UPDATE`, [
    tenant,
    key,
  ]);
  return writer;
}

/** Backends of this schema's statements waiting on a lock, `writer` aside. */
async function lockWaiters(writer: pg.PoolClient): Promise<number> {
  const result = await pool.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE wait_event_type = 'Lock' AND pid <> $1 AND position($2 in query) > 0`,
    [(writer as unknown as { processID: number }).processID, schema],
  );
  return result.rows[0].n as number;
}

async function endHold(writer: pg.PoolClient): Promise<void> {
  try {
    await writer.query('ROLLBACK');
  } finally {
    writer.release();
  }
}

const refund = (runId: string) => ({ tool: 'refund', tenant, runId, arguments: { order: runId } });

it('guard.resolve past operationTimeoutMs: outcome unknown, and the release lands after the lock', async () => {
  const key = await stopCall(guard, refund('api'), 'gateway timeout');
  const writer = await holdRow(key);
  try {
    const failure = await guard.resolve(key, { released: true }, { by: 'alice' }).then(
      () => expect.unreachable('the resolve cannot answer while the row is locked'),
      (error: unknown) => error,
    );
    expect(StoreUnavailableError.isInstance(failure)).toBe(true);
    expect(failure).toMatchObject({ operation: 'resolve', outcome: 'unknown' });
    expect(StoreUnavailableError.isOutcomeUnknown(failure)).toBe(true);
    expect((failure as Error).message).toContain(`operationTimeoutMs (${OPERATION_TIMEOUT_MS} ms)`);
    // The statement the guard gave up on still waits for the lock, server-side.
    expect(await lockWaiters(writer)).toBe(1);
  } finally {
    await endHold(writer);
  }
  // ...and lands: "nothing was changed" would have been false.
  await waitFor(
    () => store.get({ tenant, key }),
    (record) => record === null,
    {
      message: 'the timed-out release to land',
    },
  );
});

it('toolfence release past operationTimeoutMs exits 5 "result unknown: inspect and look"', async () => {
  const key = await stopCall(guard, refund('cli'), 'gateway timeout');
  const writer = await holdRow(key);
  let run: Awaited<ReturnType<typeof runCli>>;
  try {
    run = await runCli(['--store', databaseUrl, '--schema', schema, '--tenant', tenant, 'release', key]);
  } finally {
    await endHold(writer);
  }
  expect(run.code, run.stderr).toBe(5);
  expect(run.stderr).toContain('no answer within operationTimeoutMs');
  expect(run.stderr).toContain(
    'the result is unknown: the store may have applied it. Run `toolfence inspect KEY` and look before you try again.',
  );
  await waitFor(
    () => store.get({ tenant, key }),
    (record) => record === null,
    {
      message: "the CLI's timed-out release to land",
    },
  );
}, 60_000);

it('toolfence release on a refused connection exits 3: nothing was sent', async () => {
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = '1'; // nothing listens there: ECONNREFUSED
  const run = await runCli([
    '--store',
    url.href,
    '--schema',
    schema,
    '--tenant',
    tenant,
    'release',
    'a'.repeat(64),
  ]);
  expect(run.code, run.stderr).toBe(3);
  expect(run.stderr).not.toContain('the result is unknown');
}, 60_000);

it('the console answers a timed-out settlement "Result unknown: reload and look" (503)', async () => {
  const key = await stopCall(guard, refund('console'), 'gateway timeout');
  const handler = createConsoleHandler({
    store,
    guard,
    authorize: authorizeByHeader,
    basePath: '/console',
    onError: () => undefined,
  });
  const server = createServer((request, response) => void handler(request, response));
  const origin = await listen(server);
  try {
    const alice = new ConsoleClient(origin, 'alice');
    const page = await alice.get(recordPath('/console', tenant, key));
    const confirm = await alice.post('/console/confirm', {
      ...formFields(page.text, '/confirm'),
      action: 'release',
      reason: 'nothing at the provider',
    });
    expect(confirm.status, confirm.text).toBe(200);
    const writer = await holdRow(key);
    let answer: Awaited<ReturnType<ConsoleClient['post']>>;
    try {
      answer = await alice.post('/console/resolve', formFields(confirm.text, '/resolve'));
    } finally {
      await endHold(writer);
    }
    expect(answer.status).toBe(503);
    expect(answer.text).toContain('<h1>Result unknown</h1>');
    expect(answer.text).toContain(
      'The store did not answer in time, so this change may have been made, or may still be made in a moment.',
    );
    expect(answer.text).toContain('reload the record and look at its state and history before you act again');
    expect(answer.text).not.toContain('Nothing was changed');
    await waitFor(
      () => store.get({ tenant, key }),
      (record: IdempotencyRecord | null) => record === null,
      {
        message: "the console's timed-out release to land",
      },
    );
  } finally {
    await close(server);
  }
});
