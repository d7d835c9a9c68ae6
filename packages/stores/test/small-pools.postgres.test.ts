// A PostgresStore on a small pool (issue 30, item 4): the LISTEN connection held for the store's
// life took one of the pool's slots, so with `max: 1` the first waitForSettle kept the only
// connection and every later claim failed with StoreUnavailableError after its deadline, for the
// life of the store. LISTEN now has a connection of its own, outside the pool.
import { randomBytes } from 'node:crypto';
import { PostgresStore } from '@toolfence/stores/postgres';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions, DAY_MS, randomRef } from '../../../test/support/claims.js';
import { createPool, dropSchema, requirePostgres, uniqueSchemaName } from '../../../test/support/postgres.js';
import { waitFor } from '../../../test/support/wait-for.js';

const schema = uniqueSchemaName('smallpool');
const applicationName = `toolfence-small-pool-${randomBytes(4).toString('hex')}`;
const pools: pg.Pool[] = [];
const stores: PostgresStore[] = [];
let admin: pg.Pool;

beforeAll(async () => {
  await requirePostgres();
  admin = createPool({ max: 2 });
  pools.push(admin);
  await new PostgresStore({ pool: admin, schema, autoCleanup: false }).ensureSchema();
});

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await dropSchema(schema);
  await Promise.all(pools.map((pool) => pool.end()));
});

/** This file's backends (its own application_name), by what they run. */
async function backends(): Promise<{ listen: number; other: number }> {
  const { rows } = await admin.query<{ listen: number; other: number }>(
    `SELECT count(*) FILTER (WHERE query LIKE 'LISTEN %')::int AS listen,
            count(*) FILTER (WHERE query NOT LIKE 'LISTEN %')::int AS other
       FROM pg_stat_activity WHERE application_name = $1`,
    [applicationName],
  );
  return rows[0]!;
}

describe('PostgresStore on a pool of one', () => {
  it('serves claims while a waiter holds LISTEN: the LISTEN connection is not one of the pool', async () => {
    const pool = createPool({ max: 1, application_name: applicationName });
    pools.push(pool);
    const store = new PostgresStore({ pool, schema, autoCleanup: false, operationTimeoutMs: 3_000 });
    stores.push(store);

    const held = randomRef();
    const heldOptions = claimOptions();
    expect(await store.claim(held, heldOptions)).toMatchObject({ status: 'acquired' });
    const waiting = store.waitForSettle(held, { timeoutMs: 20_000 });
    await waitFor(backends, (count) => count.listen === 1, { message: 'the LISTEN connection' });

    // Ten calls after the wait began, each claimed and completed through the pool's one slot.
    for (let call = 0; call < 10; call++) {
      const ref = randomRef();
      const options = claimOptions();
      const claimed = await store.claim(ref, options);
      expect(claimed).toMatchObject({ status: 'acquired', fence: 1 });
      expect(await store.complete(ref, { fence: 1, owner: options.owner }, '"ok"', DAY_MS)).toEqual({
        status: 'completed',
      });
    }
    expect(pool.totalCount).toBe(1);
    expect(pool.waitingCount).toBe(0);

    // The waiter is still served by its notification.
    await store.complete(held, { fence: 1, owner: heldOptions.owner }, '"done"', DAY_MS);
    expect(await waiting).toBe('settled');
    expect(await backends()).toEqual({ listen: 1, other: 1 });

    await store.close();
    // close() ends the store's own LISTEN connection; the pool (the caller's) stays open.
    await waitFor(backends, (count) => count.listen === 0, { message: 'the LISTEN connection to close' });
    expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
  });
});
