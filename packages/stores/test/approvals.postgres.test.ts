// Approvals on PostgreSQL (migration 0009) under real concurrency: claims on separate backends are
// queued on the row lock of one `approved` record (an operator's transaction holds it), then let go
// at once. The claim function consumes the approval under that lock, so exactly one claim acquires;
// a read of `approved` followed by a separate write would let several acquire.
import type { DecideResult } from '@toolfence/core/store';
import { PostgresStore } from '@toolfence/stores/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions, randomRef } from '../../../test/support/claims.js';
import {
  createPool,
  databaseUrl,
  dropSchema,
  requirePostgres,
  uniqueSchemaName,
} from '../../../test/support/postgres.js';

const schema = uniqueSchemaName('approvals');
const CLAIMERS = 12;
const application = `toolfence-approvals-race-${process.pid}`;
let pool: pg.Pool;
let store: PostgresStore;

beforeAll(async () => {
  await requirePostgres();
  pool = createPool({ max: CLAIMERS + 2, application_name: application });
  store = new PostgresStore({ pool, schema, autoCleanup: false, operationTimeoutMs: 60_000 });
  await store.ensureSchema();
});

afterAll(async () => {
  await store?.close();
  await dropSchema(schema);
  await pool?.end();
});

const decision = { tool: 'refund', fingerprint: 'f'.repeat(64), by: 'ops' } as const;

/** Backends of this file's pool waiting on a lock (the gated statements). */
async function waiting(observer: pg.Client): Promise<number> {
  const { rows } = await observer.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE application_name = $1 AND wait_event_type = 'Lock'`,
    [application],
  );
  return rows[0].n;
}

/**
 * Runs `start` while a transaction of its own holds the row lock of `ref`, and lets go once
 * `expected` backends wait on it: every statement then decides on the row at about the same time.
 */
async function gated<T>(ref: { tenant: string; key: string }, expected: number, start: () => Promise<T>[]) {
  const gate = new pg.Client({ connectionString: databaseUrl });
  // Outside the gate's transaction: a transaction reads pg_stat_activity once and keeps that copy.
  const observer = new pg.Client({ connectionString: databaseUrl });
  await gate.connect();
  await observer.connect();
  try {
    await gate.query('BEGIN');
    await gate.query(
      `SELECT 1 FROM "${schema}".idempotency_records WHERE tenant = $1 AND key = $2 FOR UPDATE`,
      [ref.tenant, ref.key],
    );
    const running = start();
    const deadline = Date.now() + 20_000;
    while ((await waiting(observer)) < expected) {
      if (Date.now() > deadline) {
        const { rows } = await observer.query(
          'SELECT application_name, wait_event_type, wait_event, state, left(query, 60) AS q FROM pg_stat_activity',
        );
        throw new Error(`fewer than ${expected} statements queued on the row lock: ${JSON.stringify(rows)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await gate.query('COMMIT');
    return await Promise.all(running);
  } finally {
    await gate.end();
    await observer.end();
  }
}

describe('PostgresStore: approvals under real concurrency (migration 0010)', () => {
  it(`${CLAIMERS} claims on ${CLAIMERS} backends queued on one approved record: exactly one acquires`, async () => {
    for (let round = 0; round < 3; round++) {
      const ref = randomRef();
      expect((await store.decideApproval(ref, { ...decision, approved: true }, 60_000)).status).toBe(
        'decided',
      );
      // Half of them need the approval, half do not: both consume it, and only once.
      const results = await gated(ref, CLAIMERS, () =>
        Array.from({ length: CLAIMERS }, (_, i) =>
          store.claim(ref, claimOptions(i % 2 === 0 ? { approval: 'required' } : {})),
        ),
      );
      const statuses = results.map((result) => result.status).sort();
      expect(statuses.filter((status) => status === 'acquired')).toHaveLength(1);
      expect(statuses.filter((status) => status === 'busy')).toHaveLength(CLAIMERS - 1);
      const acquired = results.find((result) => result.status === 'acquired');
      expect(acquired).toMatchObject({
        fence: 1,
        attempt: 1,
        takeover: false,
        approval: { approved: true, by: 'ops' },
      });
      const record = await store.get(ref);
      expect(record).toMatchObject({
        state: 'in_progress',
        fence: 1,
        attempt: 1,
        approval: { approved: true },
      });
    }
  });

  it('a denial queued with claims on one approved record: all denied, or consumed and one acquired', async () => {
    for (let round = 0; round < 3; round++) {
      const ref = randomRef();
      await store.decideApproval(ref, { ...decision, approved: true }, 60_000);
      const claimers = CLAIMERS - 1;
      let deny: Promise<DecideResult> | undefined;
      const results = await gated(ref, claimers + 1, () => {
        const claims = Array.from({ length: claimers }, () =>
          store.claim(ref, claimOptions({ approval: 'required' })),
        );
        deny = store.decideApproval(ref, { ...decision, approved: false, reason: 'revoked' }, 60_000);
        return claims;
      });
      const denial = await deny!;
      const claims = results.map((result) => result.status);
      if (denial.status === 'decided') {
        // The denial came first: every claim after it is denied, and nothing ran.
        expect(claims).toEqual(Array.from({ length: claimers }, () => 'denied'));
        expect(await store.get(ref)).toMatchObject({
          state: 'denied',
          fence: 0,
          approval: { approved: false },
        });
      } else {
        expect(denial.status).toBe('consumed');
        expect(claims.filter((status) => status === 'acquired')).toHaveLength(1);
        expect(claims.filter((status) => status === 'busy')).toHaveLength(claimers - 1);
      }
    }
  });
});
