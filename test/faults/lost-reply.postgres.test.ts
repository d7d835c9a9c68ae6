// Reproduction (fault suite): a `complete` that PostgreSQL committed but whose reply was lost
// (the connection died after COMMIT: pg_terminate_backend, a failover, a network cut). The guard
// retries the complete (Guard.completeWithRetry); the retry finds the record completed by this
// very holder and complete.sql answers "not changed", which the store reports as `stale`. The
// guard then emits `tool.stale_result` for the CURRENT holder, drops its own value, claims again
// and answers from the record (`tool.deduplicated`). The caller's value is right; the events say
// a superseded result was rejected when none was. RedisStore answers such a resent complete as
// completed (claim-1.lua / complete-1.lua, commit c0288a2); PostgresStore does not.
import { randomBytes, randomUUID } from 'node:crypto';
import { Guard, Idempotency } from '@toolfence/core';
import { type PostgresQueryable, PostgresStore } from '@toolfence/stores/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, requirePostgres } from '../support/postgres.js';

const schema = `tf_faults_lost_reply_${randomBytes(4).toString('hex')}`;
let pool: pg.Pool;
let store: PostgresStore;
/** When set, the next statement that records an outcome runs, then "loses" its reply. */
let loseNextCompleteReply = false;
let lostReplies = 0;

beforeAll(async () => {
  await requirePostgres();
  pool = createPool({ max: 4, application_name: 'tf-faults-lost-reply' });
  const lossy: PostgresQueryable = {
    async query(text, values) {
      const result = await pool.query(text, values);
      if (loseNextCompleteReply && text.includes("state = 'completed'") && text.includes('outcome = $5')) {
        loseNextCompleteReply = false;
        lostReplies += 1;
        // What pg reports when the connection dies before the reply is read.
        throw new Error('Connection terminated unexpectedly');
      }
      return result;
    },
  };
  const setup = new PostgresStore({ pool, schema, autoCleanup: false });
  await setup.ensureSchema();
  await setup.close();
  store = new PostgresStore({ pool: lossy, schema, autoCleanup: false });
});

afterAll(async () => {
  await store?.close();
  await pool?.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  await pool?.end();
});

describe('PostgresStore: a complete whose reply was lost after it committed', () => {
  it('is not reported as a stale result of the current holder', async () => {
    const events: string[] = [];
    const guard = new Guard({ store, tenant: 't', onEvent: (event) => events.push(event.type) });
    const value = await guard.run(
      {
        tool: 'charge_card',
        arguments: { account: randomUUID(), amountCents: 900 },
        runId: 'r',
        policy: { kind: Idempotency.EFFECTFUL, leaseMs: 1000 },
      },
      async () => {
        loseNextCompleteReply = true;
        return 'charged';
      },
    );
    expect(value).toBe('charged');
    expect(lostReplies).toBe(1);
    // Today: ['tool.started', 'tool.stale_result', 'tool.deduplicated'].
    expect(events).toEqual(['tool.started', 'tool.completed']);
  });
});
