// Field case C06 (docs/field-cases.md, C06) on PostgresStore, against a
// real PostgreSQL (DATABASE_URL). A transaction pooler (PgBouncer in transaction mode) hands each
// statement to whichever server connection is free; here a "pooler" sends each statement to the
// next of three dedicated backends, so every step of a call lands on a different session.
import { Guard, type GuardEvent, Idempotency, IndeterminateOutcomeError } from '@toolfence/core';
import { type PostgresQueryable, PostgresStore } from '@toolfence/stores/postgres';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdClient, openPostgresStore } from '../support/postgres.js';

let setup: Awaited<ReturnType<typeof openPostgresStore>> | undefined;
let backends: { client: pg.PoolClient; pid: number }[] = [];
let pooled: PostgresStore;
/** Backend pid of every statement the pooled store ran, in order. */
const statementPids: number[] = [];

/** Sends statement n to backend n mod 3, like a transaction pooler with three server connections. */
function transactionPooler(): PostgresQueryable {
  let next = 0;
  return {
    query: (text, values) => {
      const backend = backends[next++ % backends.length]!;
      statementPids.push(backend.pid);
      return backend.client.query(text, values as unknown[]);
    },
  };
}

beforeAll(async () => {
  setup = await openPostgresStore('c06');
  backends = await Promise.all(
    Array.from({ length: 3 }, async () => {
      const client = await holdClient(setup!.pool);
      const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      return { client, pid };
    }),
  );
  expect(new Set(backends.map((backend) => backend.pid)).size).toBe(3);
  pooled = new PostgresStore({ pool: transactionPooler(), schema: setup.schema, autoCleanup: false });
});

afterAll(async () => {
  await pooled?.close();
  for (const backend of backends) backend.client.release();
  await setup?.teardown();
});

/** Advisory locks held by the pooler's backends (other files' migrations take some meanwhile). */
const advisoryLocks = async () =>
  Number(
    (
      await setup!.pool.query(
        "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = ANY($1::int[])",
        [backends.map((backend) => backend.pid)],
      )
    ).rows[0].n,
  );

function guarded(tenant: string) {
  const events: GuardEvent[] = [];
  const guard = new Guard({ store: pooled, tenant, onEvent: (event) => events.push(event) });
  return { guard, events };
}

describe('C06 on PostgreSQL: no session-level lock, so a transaction pooler is safe', () => {
  it('claims on one backend and completes on another; the repeat is deduplicated', async () => {
    const { guard, events } = guarded(`c06-a-${Date.now()}`);
    let executions = 0;
    let locksDuringBody = -1;
    const call = {
      tool: 'send_invoice',
      arguments: { invoice: 'INV-1' },
      runId: 'r1',
      policy: { kind: Idempotency.EFFECTFUL },
    };
    statementPids.length = 0;
    const first = await guard.run(call, async () => {
      executions += 1;
      locksDuringBody = await advisoryLocks();
      return 'sent';
    });
    expect(first).toBe('sent');
    // The claim and the complete ran on different backends, and nothing was held in between.
    expect(statementPids).toHaveLength(2);
    expect(statementPids[0]).not.toBe(statementPids[1]);
    expect(locksDuringBody).toBe(0);
    expect(await guard.run(call, async () => `ran again ${++executions}`)).toBe('sent');
    expect(executions).toBe(1);
    expect(events.map((event) => event.type)).toEqual([
      'tool.started',
      'tool.completed',
      'tool.deduplicated',
    ]);
  });

  it('releases on another backend after an IDEMPOTENT failure, and the key really is free', async () => {
    const tenant = `c06-b-${Date.now()}`;
    const { guard } = guarded(tenant);
    const call = {
      tool: 'upsert_contact',
      arguments: { email: 'a@b.c' },
      runId: 'r1',
      policy: { kind: Idempotency.IDEMPOTENT },
    };
    let executions = 0;
    statementPids.length = 0;
    const failure = await guard
      .run(call, async () => {
        executions += 1;
        throw new Error('provider 503');
      })
      .catch((error: unknown) => error);
    expect(String(failure)).toContain('provider 503');
    expect(new Set(statementPids.slice(0, 2)).size).toBe(2);
    expect(await setup!.store.forget({ tenant })).toBe(0); // the release removed the record
    expect(await guard.run(call, async () => `ok ${++executions}`)).toBe('ok 2');
  });

  it('marks an EFFECTFUL failure indeterminate on another backend', async () => {
    const { guard } = guarded(`c06-c-${Date.now()}`);
    const call = {
      tool: 'charge_card',
      arguments: { amount: 5 },
      runId: 'r1',
      policy: { kind: Idempotency.EFFECTFUL },
    };
    const error = await guard
      .run(call, async () => {
        throw new Error('socket hang up');
      })
      .catch((caught: unknown) => caught);
    expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
    const again = await guard.run(call, async () => 'charged twice').catch((caught: unknown) => caught);
    expect(IndeterminateOutcomeError.isInstance(again)).toBe(true);
  });

  it('a complete that matches no row is reported (tool.stale_result), never ignored, and the known value is recorded again', async () => {
    const tenant = `c06-d-${Date.now()}`;
    const { guard, events } = guarded(tenant);
    const call = {
      tool: 'send_invoice',
      arguments: { invoice: 'INV-9' },
      runId: 'r1',
      policy: { kind: Idempotency.EFFECTFUL },
    };
    let sends = 0;
    const answer = await guard.run(call, async () => {
      sends++;
      // An operator erases the tenant while the body runs: the holder's row is gone.
      expect(await setup!.store.forget({ tenant })).toBe(1);
      return 'sent';
    });
    expect(answer).toBe('sent');
    // The missing row is reported, and the value this call knows is recorded in a new life of the
    // key (docs/guarantee.md, rule G1): the body is never entered again.
    expect(events.map((event) => event.type)).toEqual([
      'tool.started',
      'tool.stale_result',
      'tool.completed',
    ]);
    expect(events[2]).toMatchObject({ recorded: true });
    expect(await guard.run(call, async () => 'sent twice')).toBe('sent');
    expect(sends).toBe(1);
  });

  it('store level: a release or complete that matches no row says so, on any backend', async () => {
    const ref = { tenant: `c06-e-${Date.now()}`, key: 'e'.repeat(64) };
    const options = {
      tool: 't',
      fingerprint: 'f',
      owner: 'holder-1',
      leaseMs: 30_000,
      retentionMs: 60_000,
      mode: 'at-least-once' as const,
      maxAttempts: 3,
      checkFingerprint: false,
    };
    expect((await pooled.claim(ref, options)).status).toBe('acquired');
    const holder = { fence: 1, owner: 'holder-1' };
    expect(await pooled.release(ref, holder)).toEqual({ status: 'released' });
    expect(await pooled.release(ref, holder)).toEqual({ status: 'not_found' });
    expect(await pooled.complete(ref, holder, '"x"', 60_000)).toEqual({ status: 'not_found' });
    expect((await pooled.claim(ref, { ...options, owner: 'holder-2' })).status).toBe('acquired');
    expect(await pooled.release(ref, holder)).toMatchObject({
      status: 'stale',
      record: { owner: 'holder-2' },
    });
    expect(await pooled.complete(ref, holder, '"x"', 60_000)).toMatchObject({ status: 'stale' });
  });
});
