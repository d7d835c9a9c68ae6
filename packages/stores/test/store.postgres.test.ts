// PostgresStore behaviour that the generic conformance suite cannot see: real connection-level
// races, migrations under concurrency, pooler-style connection hopping (C06), round trips,
// retention cleanup, identifier quoting and the single LISTEN connection.
import { createHash, randomBytes } from 'node:crypto';
import type { RecordRef } from '@toolfence/core';
import { StoreConfigurationError, StoreInputError, StoreUnavailableError } from '@toolfence/core';
import { PostgresStore, type PostgresStoreOptions } from '@toolfence/stores/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions, randomRef } from '../../../test/support/claims.js';
import {
  createPool,
  dropSchema,
  holdClient,
  requirePostgres,
  uniqueSchemaName,
} from '../../../test/support/postgres.js';
import { waitFor } from '../../../test/support/wait-for.js';

const DAY_MS = 86_400_000;
const schema = uniqueSchemaName('pgstore');
const schemas = [schema];
const pools: pg.Pool[] = [];
const stores: PostgresStore[] = [];
let pool: pg.Pool;
let store: PostgresStore;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const ref = (): RecordRef => randomRef();

/** The application_name of each store's connections: its pool's own, so a count is of its backends. */
const connectionNames = new WeakMap<object, string>();

function newPool(config: pg.PoolConfig = {}): pg.Pool {
  const name = config.application_name ?? `toolfence-postgres-tests-${randomBytes(4).toString('hex')}`;
  const created = createPool({ ...config, application_name: name });
  connectionNames.set(created, name);
  pools.push(created);
  return created;
}

function newStore(
  options: Partial<PostgresStoreOptions> & Pick<PostgresStoreOptions, 'pool'>,
): PostgresStore {
  const created = new PostgresStore({ schema, autoCleanup: false, ...options });
  const name = connectionNames.get(options.pool);
  if (name !== undefined) connectionNames.set(created, name);
  stores.push(created);
  return created;
}

async function scalar<T>(text: string, values: unknown[] = []): Promise<T> {
  const result = await pool.query(text, values);
  return Object.values(result.rows[0] as Record<string, unknown>)[0] as T;
}

/**
 * `on`'s backends that LISTEN on its channel, counted by its pool's application_name (stores of
 * this file share a schema, so a channel alone is not one store's); with `idle`, only those that
 * finished the LISTEN: the store's LISTEN connection is in place.
 */
function listeningBackends(on: PostgresStore, { idle = false } = {}): Promise<number> {
  const name = connectionNames.get(on);
  if (name === undefined) throw new Error('listeningBackends: a store made by newStore on a newPool');
  return scalar<number>(
    `SELECT count(*)::int FROM pg_stat_activity
      WHERE query = $1 AND application_name = $2 AND (NOT $3::boolean OR state = 'idle')`,
    [`LISTEN "${on.channel}"`, name, idle],
  );
}

/** Until `on`'s LISTEN connection has closed (its backend exits just after the socket closes). */
async function untilNotListening(on: PostgresStore): Promise<void> {
  await waitFor(
    () => listeningBackends(on),
    (count) => count === 0,
    {
      message: `the LISTEN connection on ${on.channel} to close`,
    },
  );
}

/**
 * Until a settle of `target` is certainly notified to `on`'s waiters: the store LISTENs (one idle
 * backend) and a waiter's first read has marked the row `waited` (the trigger notifies only
 * then). Polls with a deadline: a fixed sleep is outrun by a loaded machine.
 */
async function untilNotified(on: PostgresStore, target: RecordRef): Promise<void> {
  await waitFor(
    () => listeningBackends(on, { idle: true }),
    (count) => count === 1,
    {
      message: `the LISTEN connection on ${on.channel}`,
    },
  );
  await waitFor(
    async () =>
      (
        await pool.query(`SELECT waited FROM ${on.tableName} WHERE tenant = $1 AND key = $2`, [
          target.tenant,
          target.key,
        ])
      ).rows[0]?.waited === true,
    (waited) => waited,
    { message: 'the waiter to mark its record waited' },
  );
}

beforeAll(async () => {
  await requirePostgres();
  pool = newPool({ max: 30 });
  store = newStore({ pool });
  expect(await store.ensureSchema()).toEqual({ applied: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] });
});

afterAll(async () => {
  await Promise.all(stores.map((created) => created.close()));
  for (const name of schemas) await dropSchema(name);
  await Promise.all(pools.map((created) => created.end()));
});

describe('PostgresStore on PostgreSQL', () => {
  it('20 connections claim one key at once, 50 times over: exactly one winner every time', async () => {
    const clients = await Promise.all(Array.from({ length: 20 }, () => holdClient(pool)));
    try {
      const pids = await Promise.all(
        clients.map(async (client) => (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid),
      );
      expect(new Set(pids).size).toBe(20);
      // One store per dedicated connection: every claimer really is a different backend.
      const racers = clients.map((client) => newStore({ pool: client }));
      for (let round = 0; round < 50; round++) {
        const target = ref();
        const results = await Promise.all(racers.map((racer) => racer.claim(target, claimOptions())));
        const statuses = results.map((result) => result.status);
        expect(
          statuses.filter((status) => status === 'acquired'),
          `round ${round}`,
        ).toHaveLength(1);
        expect(
          statuses.filter((status) => status === 'busy'),
          `round ${round}`,
        ).toHaveLength(19);
      }
    } finally {
      for (const client of clients) client.release();
    }
  });

  it('20 connections race to take over one expired lease: exactly one takeover with fence 2', async () => {
    const clients = await Promise.all(Array.from({ length: 20 }, () => holdClient(pool)));
    try {
      const racers = clients.map((client) => newStore({ pool: client }));
      for (let round = 0; round < 10; round++) {
        const target = ref();
        expect((await store.claim(target, claimOptions({ leaseMs: 50 }))).status).toBe('acquired');
        await sleep(70);
        const results = await Promise.all(racers.map((racer) => racer.claim(target, claimOptions())));
        const winners = results.filter((result) => result.status === 'acquired');
        expect(winners, `round ${round}`).toHaveLength(1);
        expect(winners[0]).toMatchObject({ fence: 2, attempt: 2, takeover: true });
        expect(results.filter((result) => result.status === 'busy')).toHaveLength(19);
      }
    } finally {
      for (const client of clients) client.release();
    }
  });

  it('ensureSchema run by 20 pools at once applies the migration exactly once', async () => {
    const raceSchema = uniqueSchemaName('migrate');
    schemas.push(raceSchema);
    const racerPools = Array.from({ length: 20 }, () => newPool({ max: 1 }));
    const racers = racerPools.map((racerPool) => newStore({ pool: racerPool, schema: raceSchema }));
    const results = await Promise.all(racers.map((racer) => racer.ensureSchema()));
    expect(results.filter((result) => result.applied.length > 0)).toEqual([
      { applied: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] },
    ]);
    expect(results.filter((result) => result.applied.length === 0)).toHaveLength(19);
    expect(
      Number(
        await scalar(
          `SELECT count(*) FROM ${pg.escapeIdentifier(raceSchema)}.idempotency_records_migrations`,
        ),
      ),
    ).toBe(10);
    expect(await racers[0]!.ensureSchema()).toEqual({ applied: [] });
    const target = ref();
    expect((await racers[7]!.claim(target, claimOptions())).status).toBe('acquired');
    // Their 20 connections would otherwise stay open (idle) until the file ends: the PostgreSQL
    // files of packages/stores/test together came within reach of max_connections 100 (bench/RESULTS.md,
    // "Issue 22, run 3").
    for (const racer of racers) await racer.close();
    await Promise.all(racerPools.map((racerPool) => racerPool.end()));
    for (const racerPool of racerPools) pools.splice(pools.indexOf(racerPool), 1);
  });

  it('holds no session-level lock: claim on one connection, complete and release on others (C06)', async () => {
    const [a, b, c] = await Promise.all([holdClient(pool), holdClient(pool), holdClient(pool)]);
    try {
      const pid = async (client: pg.PoolClient) =>
        (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      expect(new Set([await pid(a), await pid(b), await pid(c)]).size).toBe(3);
      const onA = newStore({ pool: a });
      const onB = newStore({ pool: b });
      const onC = newStore({ pool: c });

      const first = ref();
      const options = claimOptions();
      const claimed = await onA.claim(first, options);
      expect(claimed.status).toBe('acquired');
      // None held by the claim's session (other files' migrations take advisory locks meanwhile).
      expect(
        Number(
          await scalar("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = $1", [
            await pid(a),
          ]),
        ),
      ).toBe(0);
      const holder = { fence: 1, owner: options.owner };
      expect(await onB.renew(first, holder, 30_000)).toMatchObject({ status: 'renewed' });
      expect(await onB.complete(first, holder, '"done"', DAY_MS)).toEqual({ status: 'completed' });
      expect((await onC.claim(first, claimOptions())).status).toBe('completed');

      const second = ref();
      const secondOptions = claimOptions();
      await onA.claim(second, secondOptions);
      expect(await onC.release(second, { fence: 1, owner: secondOptions.owner })).toEqual({
        status: 'released',
      });
      expect(await onB.get(second)).toBeNull();

      // A change that matches no row is reported, never silently ignored.
      expect(await onB.release(second, { fence: 1, owner: secondOptions.owner })).toEqual({
        status: 'not_found',
      });
      expect(await onB.complete(second, { fence: 1, owner: secondOptions.owner }, '"x"', DAY_MS)).toEqual({
        status: 'not_found',
      });
      expect(await onC.complete(first, { fence: 1, owner: 'not-the-holder' }, '"x"', DAY_MS)).toMatchObject({
        status: 'stale',
        record: { state: 'completed', outcome: '"done"' },
      });
      expect(await onC.release(first, holder)).toMatchObject({ status: 'stale' });
    } finally {
      a.release();
      b.release();
      c.release();
    }
  });

  it('round trips: first call 2, repeat 1, takeover 1, busy 1', async () => {
    const texts: string[] = [];
    const counting = {
      query: (text: string, values?: unknown[]) => {
        texts.push(text);
        return pool.query(text, values);
      },
    };
    const counted = newStore({ pool: counting });
    const measure = async (work: () => Promise<unknown>) => {
      texts.length = 0;
      await work();
      return texts.length;
    };
    const target = ref();
    const options = claimOptions();
    expect(
      await measure(async () => {
        await counted.claim(target, options);
        await counted.complete(target, { fence: 1, owner: options.owner }, '"r"', DAY_MS);
      }),
    ).toBe(2);
    expect(await measure(() => counted.claim(target, claimOptions()))).toBe(1);

    const lapsed = ref();
    // Long enough that the second claim finds it live on a loaded machine.
    await counted.claim(lapsed, claimOptions({ leaseMs: 500 }));
    let busy: unknown;
    expect(
      await measure(async () => {
        busy = await counted.claim(lapsed, claimOptions());
      }),
    ).toBe(1);
    expect(busy).toMatchObject({ status: 'busy' });
    await sleep(600);
    let takeover: unknown;
    expect(
      await measure(async () => {
        takeover = await counted.claim(lapsed, claimOptions());
      }),
    ).toBe(1);
    expect(takeover).toMatchObject({ status: 'acquired', fence: 2, takeover: true });
  });

  it('answers a settled, busy or conflicting claim without writing: the row version stays the same', async () => {
    const version = async (target: RecordRef) =>
      (
        await pool.query(
          `SELECT xmin::text AS xmin, ctid::text AS ctid FROM ${store.tableName} WHERE tenant = $1 AND key = $2`,
          [target.tenant, target.key],
        )
      ).rows[0] as { xmin: string; ctid: string };
    const settledStates = async () => {
      const completed = ref();
      const completedBy = claimOptions();
      await store.claim(completed, completedBy);
      await store.complete(completed, { fence: 1, owner: completedBy.owner }, '"done"', DAY_MS);
      const indeterminate = ref();
      const indeterminateBy = claimOptions();
      await store.claim(indeterminate, indeterminateBy);
      await store.markIndeterminate(
        indeterminate,
        { fence: 1, owner: indeterminateBy.owner },
        { type: 'Timeout', message: 'no answer' },
        DAY_MS,
      );
      const abandoned = ref();
      await store.claim(abandoned, claimOptions({ leaseMs: 30, maxAttempts: 1 }));
      await sleep(50);
      expect((await store.claim(abandoned, claimOptions({ maxAttempts: 1 }))).status).toBe('abandoned');
      const busy = ref();
      await store.claim(busy, claimOptions());
      return { completed, indeterminate, abandoned, busy };
    };
    const targets = await settledStates();
    const expected = {
      completed: 'completed',
      indeterminate: 'indeterminate',
      abandoned: 'abandoned',
      busy: 'busy',
    } as const;
    for (const [name, target] of Object.entries(targets) as [keyof typeof expected, RecordRef][]) {
      const before = await version(target);
      for (let index = 0; index < 100; index++) {
        expect((await store.claim(target, claimOptions({ maxAttempts: 1 }))).status, name).toBe(
          expected[name],
        );
      }
      // Another tool on the same key: a conflict, read-only too.
      expect((await store.claim(target, claimOptions({ tool: 'other-tool' }))).status, name).toBe('conflict');
      expect(await version(target), name).toEqual(before);
    }
  });

  it('names its statements (prepared once per connection) and falls back to unnamed ones when the server forgets them', async () => {
    // A new connection, with nothing prepared on it by other tests.
    const client = await holdClient(newPool({ max: 1 }));
    try {
      const onClient = newStore({ pool: client });
      const target = ref();
      const options = claimOptions();
      await onClient.claim(target, options);
      await onClient.complete(target, { fence: 1, owner: options.owner }, '"done"', DAY_MS);
      const preparedNames = async () =>
        (await client.query('SELECT name FROM pg_prepared_statements ORDER BY name')).rows.map(
          (row: { name: string }) => row.name,
        );
      const prepared = await preparedNames();
      expect(prepared.filter((name: string) => name.startsWith('toolfence_'))).toHaveLength(2);
      for (let index = 0; index < 10; index++)
        expect((await onClient.claim(target, claimOptions())).status).toBe('completed');
      expect(await preparedNames()).toEqual(prepared);

      // As behind a transaction pooler that does not keep prepared statements: the connection
      // believes the statement is prepared, the server does not know it (26000). The call is sent
      // again unnamed, and so is every later one.
      await client.query('DEALLOCATE ALL');
      expect((await onClient.claim(target, claimOptions())).status).toBe('completed');
      const second = ref();
      const secondOptions = claimOptions();
      expect((await onClient.claim(second, secondOptions)).status).toBe('acquired');
      expect(
        await onClient.complete(second, { fence: 1, owner: secondOptions.owner }, '"2"', DAY_MS),
      ).toEqual({
        status: 'completed',
      });
      expect(await preparedNames()).toEqual([]);

      // A custom queryable gets text and values unless it asks for named statements.
      const texts: unknown[] = [];
      const custom = newStore({
        pool: {
          query: (text: string, values?: unknown[]) => {
            texts.push(text);
            return pool.query(text, values);
          },
        },
      });
      await custom.get(target);
      expect(typeof texts[0]).toBe('string');
      const unnamed = newStore({ pool: client, preparedStatements: false });
      await unnamed.get(target);
      expect(await preparedNames()).toEqual([]);
    } finally {
      client.release();
    }
  });

  it('NOTIFYs a settle only when someone waited for the record', async () => {
    const listenPool = newPool({ max: 2 });
    const notifications: string[] = [];
    const listener = await holdClient(listenPool);
    // A store of its own, so the LISTEN connection it opens is closed again at the end.
    const waiter = newStore({ pool: newPool({ max: 3 }) });
    try {
      listener.on('notification', (message) => notifications.push(message.payload ?? ''));
      await listener.query(`LISTEN "${store.channel}"`);
      // Same digest as the trigger: SHA-256 of tenant, NUL, key.
      const digest = (target: RecordRef) =>
        createHash('sha256')
          .update(Buffer.from(target.tenant))
          .update(Buffer.from([0]))
          .update(Buffer.from(target.key))
          .digest('hex');

      const unwatched = ref();
      const unwatchedBy = claimOptions();
      await store.claim(unwatched, unwatchedBy);
      await store.complete(unwatched, { fence: 1, owner: unwatchedBy.owner }, '"quiet"', DAY_MS);
      const released = ref();
      const releasedBy = claimOptions();
      await store.claim(released, releasedBy);
      await store.release(released, { fence: 1, owner: releasedBy.owner });

      const watched = ref();
      const watchedBy = claimOptions();
      await store.claim(watched, watchedBy);
      const waiting = waiter.waitForSettle(watched, { timeoutMs: 10_000 });
      await untilNotified(waiter, watched);
      await store.complete(watched, { fence: 1, owner: watchedBy.owner }, '"heard"', DAY_MS);
      expect(await waiting).toBe('settled');
      // Notifications arrive in commit order: once the watched one is here, any of the two
      // unwatched settles (committed before it) would be too.
      await waitFor(
        () => notifications.length,
        (count) => count > 0,
        { message: 'a notification' },
      );
      expect(notifications).toEqual([digest(watched)]);
    } finally {
      // Its own LISTEN ends before it does, so no count of this channel sees it while it closes.
      await listener.query('UNLISTEN *');
      listener.release(true);
      await waiter.close();
      await untilNotListening(waiter);
    }
  });

  it('treats expired rows as absent and cleanup() deletes them in bounded batches', async () => {
    const tenant = `cleanup-${randomBytes(4).toString('hex')}`;
    const expired = Array.from({ length: 25 }, () => ({ tenant, key: randomBytes(32).toString('hex') }));
    for (const target of expired) {
      const options = claimOptions({ leaseMs: 10, retentionMs: 1 });
      await store.claim(target, options);
      await store.complete(target, { fence: 1, owner: options.owner }, '"old"', 1);
    }
    const live = { tenant, key: randomBytes(32).toString('hex') };
    await store.claim(live, claimOptions());
    await sleep(20);
    const rowsOfTenant = async () =>
      Number(await scalar(`SELECT count(*) FROM ${store.tableName} WHERE tenant = $1`, [tenant]));
    expect(await rowsOfTenant()).toBe(26);
    expect(await store.get(expired[0]!)).toBeNull();

    // Other test files' rows are in other schemas; this table may hold expired rows of earlier
    // tests, so count down from what is there.
    const expiredTotal = Number(
      await scalar(`SELECT count(*) FROM ${store.tableName} WHERE expires_at <= now()`),
    );
    expect(expiredTotal).toBeGreaterThanOrEqual(25);
    let deleted = 0;
    for (;;) {
      const batch = await store.cleanup({ limit: 10 });
      expect(batch).toBeLessThanOrEqual(10);
      deleted += batch;
      if (batch < 10) break;
    }
    expect(deleted).toBeGreaterThanOrEqual(25);
    expect(await rowsOfTenant()).toBe(1);
    expect(await store.get(live)).toMatchObject({ state: 'in_progress' });
    await expect(store.cleanup({ limit: 0 })).rejects.toThrow(RangeError);
  });

  it('a claim over an expired row replaces it in the same statement, starting at fence 1', async () => {
    const target = ref();
    const first = claimOptions({ leaseMs: 10, retentionMs: 1 });
    await store.claim(target, first);
    await store.complete(target, { fence: 1, owner: first.owner }, '"old"', 1);
    await sleep(15);
    const again = await store.claim(target, claimOptions({ tool: 'another-tool' }));
    expect(again).toMatchObject({ status: 'acquired', fence: 1, attempt: 1, takeover: false });
    expect(await store.get(target)).toMatchObject({ tool: 'another-tool', state: 'in_progress' });
    expect((await store.get(target))?.outcome).toBeUndefined();
  });

  it('runs opportunistic cleanup off the caller’s path after everyClaims claims', async () => {
    const auto = newStore({ pool, autoCleanup: { everyClaims: 3, limit: 1000 } });
    const target = ref();
    const options = claimOptions({ leaseMs: 10, retentionMs: 1 });
    await auto.claim(target, options);
    await auto.complete(target, { fence: 1, owner: options.owner }, '"old"', 1);
    await sleep(15);
    const count = async () =>
      Number(await scalar(`SELECT count(*) FROM ${store.tableName} WHERE tenant = $1`, [target.tenant]));
    expect(await count()).toBe(1);
    await auto.claim(ref(), claimOptions());
    await auto.claim(ref(), claimOptions());
    await auto.close(); // waits for the background run
    expect(await count()).toBe(0);
  });

  it('quotes odd schema and table names everywhere, including the NOTIFY trigger', async () => {
    const oddSchema = `Odd "Schema"; DROP ${randomBytes(3).toString('hex')}`;
    const oddTable = 'Tool Fence "records" --';
    schemas.push(oddSchema);
    const odd = newStore({ pool, schema: oddSchema, table: oddTable });
    expect(await odd.ensureSchema()).toEqual({ applied: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] });
    expect(
      await scalar(
        'SELECT count(*)::int FROM pg_tables WHERE schemaname = $1 AND tablename IN ($2, $3, $4)',
        [oddSchema, oddTable, `${oddTable}_migrations`, `${oddTable}_resolutions`],
      ),
    ).toBe(3);
    const target = ref();
    const options = claimOptions();
    expect((await odd.claim(target, options)).status).toBe('acquired');
    const waiting = odd.waitForSettle(target, { timeoutMs: 10_000 });
    // Settled through the quoted trigger's NOTIFY, not by a read that came after the complete.
    await untilNotified(odd, target);
    await odd.complete(target, { fence: 1, owner: options.owner }, '"odd"', DAY_MS);
    expect(await waiting).toBe('settled');
    expect(await odd.get(target)).toMatchObject({ outcome: '"odd"' });
    // The default-named table in the same database is untouched.
    expect(await store.get(target)).toBeNull();
    expect(() => newStore({ pool, table: '' })).toThrow(TypeError);
    expect(() => newStore({ pool, schema: 'x'.repeat(64) })).toThrow(TypeError);
  });

  it('100 waiters share one LISTEN connection and all wake on one settle', async () => {
    const listenPool = newPool({ max: 5 });
    let connects = 0;
    // pool.query() checks out its client by calling connect() synchronously inside query(); the
    // store's own checkouts (pg-checkout.ts) call connect() directly.
    type Loose = Record<'connect' | 'query', (...args: unknown[]) => unknown>;
    const loose = listenPool as unknown as Loose;
    const originalConnect = loose.connect.bind(listenPool);
    const originalQuery = loose.query.bind(listenPool);
    let insideQuery = false;
    loose.query = (...args: unknown[]) => {
      insideQuery = true;
      try {
        return originalQuery(...args);
      } finally {
        insideQuery = false;
      }
    };
    loose.connect = (...args: unknown[]) => {
      if (!insideQuery) connects += 1;
      return originalConnect(...args);
    };
    const listening = newStore({ pool: listenPool, safetyPollMs: 60_000 });
    const target = ref();
    const options = claimOptions();
    await listening.claim(target, options);
    const waiters = Array.from({ length: 100 }, () => listening.waitForSettle(target, { timeoutMs: 10_000 }));
    await untilNotified(listening, target);
    // LISTEN has a connection of its own (small-pools.postgres.test.ts): none from the pool.
    expect(connects).toBe(0);
    expect(listening.listenConnectionsOpened).toBe(1);
    expect(await listeningBackends(listening)).toBe(1);
    const started = Date.now();
    await listening.complete(target, { fence: 1, owner: options.owner }, '"done"', DAY_MS);
    expect(new Set(await Promise.all(waiters))).toEqual(new Set(['settled']));
    // Woken by the notification, not by a poll (safety poll is a minute, lease 30 s).
    expect(Date.now() - started).toBeLessThan(2_000);

    await listening.close();
    await untilNotListening(listening);
    // close() released what the store opened, not the caller's pool.
    expect((await listenPool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
  });

  it('reconnects the LISTEN connection when its backend dies, polling meanwhile', async () => {
    const listenPool = newPool({ max: 5 });
    const resilient = newStore({ pool: listenPool, safetyPollMs: 60_000 });
    const first = ref();
    const firstOptions = claimOptions();
    await resilient.claim(first, firstOptions);
    const firstWait = resilient.waitForSettle(first, { timeoutMs: 10_000 });
    await untilNotified(resilient, first);
    expect(resilient.listenConnectionsOpened).toBe(1);
    const killed = (
      await pool.query(
        // In the select list, evaluated only for the rows the inner WHERE kept.
        `SELECT pid, pg_terminate_backend(pid) FROM (
           SELECT pid FROM pg_stat_activity WHERE query = $1 AND application_name = $2
         ) AS mine`,
        [`LISTEN "${resilient.channel}"`, connectionNames.get(resilient)],
      )
    ).rows.map((row: { pid: number }) => row.pid);
    expect(killed).toHaveLength(1);
    // Settle once the backend is gone, while LISTEN is down (or being reopened).
    await waitFor(
      () => scalar<number>('SELECT count(*)::int FROM pg_stat_activity WHERE pid = ANY($1)', [killed]),
      (count) => count === 0,
      { message: 'the terminated LISTEN backend to exit' },
    );
    // Settled while LISTEN may be down: the waiter still learns it (poll, or re-read on reconnect).
    await resilient.complete(first, { fence: 1, owner: firstOptions.owner }, '"1"', DAY_MS);
    expect(await firstWait).toBe('settled');

    await waitFor(
      () => resilient.listenConnectionsOpened,
      (opened) => opened >= 2,
      { message: 'the LISTEN connection to reopen' },
    );
    expect(resilient.listenConnectionsOpened).toBe(2);
    const second = ref();
    const secondOptions = claimOptions();
    await resilient.claim(second, secondOptions);
    const secondWait = resilient.waitForSettle(second, { timeoutMs: 10_000 });
    await untilNotified(resilient, second);
    const started = Date.now();
    await resilient.complete(second, { fence: 1, owner: secondOptions.owner }, '"2"', DAY_MS);
    expect(await secondWait).toBe('settled');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('waitForSettle honours the lease renewed while waiting, judged on the database clock', async () => {
    const target = ref();
    // A lease long enough that the renewal lands inside it on a loaded machine.
    const options = claimOptions({ leaseMs: 1_000 });
    await store.claim(target, options);
    const waiting = store.waitForSettle(target, { timeoutMs: 10_000 });
    // The waiter has read the first lease (and armed its re-read at that deadline) before the renewal.
    await untilNotified(store, target);
    const renewSentAt = Date.now();
    expect(await store.renew(target, { fence: 1, owner: options.owner }, 1_500)).toMatchObject({
      status: 'renewed',
    });
    expect(await waiting).toBe('lease_expired');
    // The renewed lease ends 1 500 ms after the database ran the renew, which is after it was sent
    // (-5: the lease deadline is kept in whole ms, the clocks read here may round the other way).
    expect(Date.now() - renewSentAt).toBeGreaterThanOrEqual(1_495);
  });

  it('waitForSettle rejects with the abort reason', async () => {
    const target = ref();
    await store.claim(target, claimOptions());
    const controller = new AbortController();
    const waiting = store.waitForSettle(target, { timeoutMs: 10_000, signal: controller.signal });
    controller.abort(new Error('caller gave up'));
    await expect(waiting).rejects.toThrow('caller gave up');
  });

  it('reports a statement timeout as StoreUnavailableError and a missing table as a setup error', async () => {
    // A lapsed lease: the claim must take the row lock (a busy or settled answer would not wait).
    const target = ref();
    await store.claim(target, claimOptions({ leaseMs: 50 }));
    await sleep(70);
    const locker = await holdClient(pool);
    const impatient = newStore({ pool: newPool({ max: 2, options: '-c statement_timeout=200' }) });
    try {
      await locker.query('BEGIN');
      await locker.query(`SELECT 1 FROM ${store.tableName} WHERE tenant = $1 AND key = $2 FOR UPDATE`, [
        target.tenant,
        target.key,
      ]);
      const error = await impatient.claim(target, claimOptions()).catch((caught: unknown) => caught);
      expect(StoreUnavailableError.isInstance(error), String(error)).toBe(true);
      expect((error as { cause?: { code?: string } }).cause?.code).toBe('57014');
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }

    const unmigrated = newStore({ pool, schema: `${schema}_never_created` });
    const missing = await unmigrated.get(ref()).catch((caught: unknown) => caught);
    expect(StoreConfigurationError.isInstance(missing)).toBe(true);
    expect(String(missing)).toMatch(/does not exist; run `await store\.ensureSchema\(\)`/);
  });

  it('refuses a lease that is zero, negative or not a number instead of storing no expiry', async () => {
    for (const leaseMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(store.claim(ref(), claimOptions({ leaseMs }))).rejects.toThrow(StoreInputError);
    }
  });

  it('records times from the database clock as epoch milliseconds', async () => {
    const target = ref();
    const result = await store.claim(target, claimOptions({ leaseMs: 10_000 }));
    const dbNowMs = Number(
      await scalar('SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::float8'),
    );
    if (result.status !== 'acquired') throw new Error('expected acquired');
    expect(result.leaseExpiresAtMs - dbNowMs).toBeGreaterThan(9_000);
    expect(result.leaseExpiresAtMs - dbNowMs).toBeLessThanOrEqual(10_000);
    expect(Number.isInteger(result.leaseExpiresAtMs)).toBe(true);
  });
});
