// What a store error says (rules S1, S5, G6): input the backend refuses anyway is StoreInputError,
// a missing schema is StoreConfigurationError naming the fix, an outage is StoreUnavailableError,
// and every one names the store and its address, never the credentials.
import { randomBytes, randomUUID } from 'node:crypto';
import {
  type ClaimOptions,
  Guard,
  Idempotency,
  type RecordRef,
  StoreConfigurationError,
  StoreInputError,
  StoreUnavailableError,
} from '@toolfence/core';
import { type PostgresQueryable, PostgresStore } from '@toolfence/stores/postgres';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions as baseClaimOptions } from '../../../test/support/claims.js';
import {
  createPool,
  databaseUrl,
  dropSchema,
  requirePostgres,
  uniqueSchemaName,
} from '../../../test/support/postgres.js';
import { connectRedis, deletePrefix, freePort, randomPrefix, redisUrl } from '../../../test/support/redis.js';

const schema = uniqueSchemaName('errors');
const prefix = randomPrefix('errors');
const password = 's3cret-Pa55word';
let pool: pg.Pool;
let redis: Redis;
const closers: (() => Promise<unknown> | unknown)[] = [];

beforeAll(async () => {
  await requirePostgres();
  pool = createPool({ max: 5 });
  await new PostgresStore({ pool, schema }).ensureSchema();
  redis = await connectRedis();
});

afterAll(async () => {
  for (const close of closers.reverse()) await Promise.resolve(close()).catch(() => undefined);
  await deletePrefix(redis, prefix);
  redis.disconnect();
  await dropSchema(schema);
  await pool.end();
});

// How a store names the server it was given (host:port/database), from the URLs the tests read,
// so the file passes whatever REDIS_URL and DATABASE_URL point at.
const postgresAddress = (url: URL): string =>
  `${url.hostname}:${url.port || '5432'}/${decodeURIComponent(url.pathname.slice(1))}`;
const redisAddress = (url: URL): string =>
  `${url.hostname}:${url.port || '6379'}/${url.pathname.slice(1) || '0'}`;

const ref = (): RecordRef => ({ tenant: 'errors', key: randomBytes(32).toString('hex') });
const claimOptions = (overrides: Partial<ClaimOptions> = {}): ClaimOptions =>
  baseClaimOptions({ mode: 'at-most-once', retentionMs: 60_000, ...overrides });

async function failure(work: Promise<unknown>): Promise<Error> {
  try {
    await work;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the operation to fail');
}

describe('PostgreSQL errors are classified for what they are', () => {
  /**
   * A queryable that sends the store's own statement but swaps in a value the store's checks would
   * refuse: the backend error caused by input, as a store without checks (or another store) gets it.
   */
  function tampering(swap: (values: unknown[]) => unknown[]): {
    queryable: PostgresQueryable;
    sent: () => number;
  } {
    let sent = 0;
    return {
      queryable: {
        query: (text, values) => {
          sent += 1;
          return pool.query(text, swap(values ?? []));
        },
      },
      sent: () => sent,
    };
  }

  it('a NUL in a tool name (22021) and a 5,000-character tenant (54000: index row too large) are StoreInputError, one round trip each', async () => {
    for (const [label, swap, state] of [
      [
        'NUL tool',
        (values: unknown[]) => values.map((value, index) => (index === 2 ? 're\u0000fund' : value)),
        '22021',
      ],
      [
        'long tenant',
        (values: unknown[]) =>
          values.map((value, index) => (index === 0 ? randomBytes(4000).toString('base64') : value)),
        '54000',
      ],
    ] as const) {
      const { queryable, sent } = tampering(swap);
      const store = new PostgresStore({ pool: queryable, schema, autoCleanup: false });
      const error = await failure(store.claim(ref(), claimOptions()));
      expect(StoreInputError.isInstance(error), `${label}: ${String(error)}`).toBe(true);
      expect((error.cause as { code?: string }).code, label).toBe(state);
      expect(error.message).toContain('PostgresStore at a custom queryable');
      expect(sent(), label).toBe(1);
    }
  });

  it('through the Guard: a value the database refuses is StoreInputError at once (no retried claim), body not run', async () => {
    const { queryable, sent } = tampering((values) =>
      values.map((value, index) => (index === 2 && typeof value === 'string' ? `${value}\u0000` : value)),
    );
    const store = new PostgresStore({ pool: queryable, schema, autoCleanup: false });
    const guard = new Guard({ store, tenant: 'errors' });
    let bodyRuns = 0;
    const error = await failure(
      guard.run(
        {
          tool: 'refund',
          arguments: { orderId: randomUUID() },
          runId: 'r',
          callId: 'c',
          policy: { kind: Idempotency.EFFECTFUL },
        },
        async () => {
          bodyRuns += 1;
          return 'paid';
        },
      ),
    );
    expect(StoreInputError.isInstance(error), String(error)).toBe(true);
    expect(bodyRuns).toBe(0);
    expect(sent()).toBe(1);
  });

  it('a missing table or schema is StoreConfigurationError naming ensureSchema()', async () => {
    const store = new PostgresStore({ pool, schema: `${schema}_never_created` });
    const error = await failure(store.claim(ref(), claimOptions()));
    expect(StoreConfigurationError.isInstance(error), String(error)).toBe(true);
    expect(error.message).toMatch(/does not exist; run `await store\.ensureSchema\(\)`/);
    expect(error.message).toContain(postgresAddress(new URL(databaseUrl)));
  });

  it('a permission refused (42501) and a read-only transaction (25006) are StoreConfigurationError', async () => {
    const role = `tf_errors_${randomBytes(3).toString('hex')}`;
    await pool.query(`CREATE ROLE ${role} LOGIN`);
    await pool.query(`GRANT USAGE ON SCHEMA ${pg.escapeIdentifier(schema)} TO ${role}`);
    closers.push(() => pool.query(`DROP OWNED BY ${role}; DROP ROLE ${role}`));
    const url = new URL(databaseUrl);
    url.username = role;
    const restricted = createPool({ connectionString: url.toString(), max: 1 });
    closers.push(() => restricted.end());
    const denied = await failure(
      new PostgresStore({ pool: restricted, schema }).claim(ref(), claimOptions()),
    );
    expect(StoreConfigurationError.isInstance(denied), String(denied)).toBe(true);
    expect((denied.cause as { code?: string }).code).toBe('42501');
    expect(denied.message).toMatch(/privilege/);

    const readOnly = createPool({ max: 1, options: '-c default_transaction_read_only=on' });
    closers.push(() => readOnly.end());
    const refused = await failure(new PostgresStore({ pool: readOnly, schema }).claim(ref(), claimOptions()));
    expect(StoreConfigurationError.isInstance(refused), String(refused)).toBe(true);
    expect((refused.cause as { code?: string }).code).toBe('25006');
  });

  it('an unreachable server is StoreUnavailableError naming host:port/db, never the password', async () => {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(await freePort());
    url.password = password;
    const down = createPool({ connectionString: url.toString(), connectionTimeoutMillis: 1_000 });
    closers.push(() => down.end());
    const store = new PostgresStore({ pool: down, schema });
    closers.push(() => store.close());
    // One operation at a time: a failed assertion must not leave the others' rejections unhandled.
    for (const operation of [
      () => store.claim(ref(), claimOptions()),
      () => store.get(ref()),
      () => store.ensureSchema(),
    ]) {
      const error = await failure(operation());
      expect(StoreUnavailableError.isInstance(error), String(error)).toBe(true);
      expect(error.message).toContain(`PostgresStore at ${postgresAddress(url)}`);
      expect(`${error.message} ${String(error.stack)}`).not.toContain(password);
    }
  });

  it('reads an outcome written by the previous version (text, no outcome_bytes) and prefers text over stale bytes', async () => {
    const store = new PostgresStore({ pool, schema, autoCleanup: false });
    const table = store.tableName;
    const old = ref();
    const options = claimOptions();
    await store.claim(old, options);
    // What the previous version's complete.sql writes: the outcome column only.
    await pool.query(
      `UPDATE ${table} SET state = 'completed', outcome = $3, expires_at = now() + interval '1 hour' WHERE tenant = $1 AND key = $2`,
      [old.tenant, old.key, '{"v":"old"}'],
    );
    expect((await store.get(old))?.outcome).toBe('{"v":"old"}');
    expect(await store.claim(old, claimOptions())).toMatchObject({
      status: 'completed',
      record: { outcome: '{"v":"old"}' },
    });
    // A row completed by the previous version after this version had written NUL bytes to it.
    await pool.query(`UPDATE ${table} SET outcome_bytes = $3 WHERE tenant = $1 AND key = $2`, [
      old.tenant,
      old.key,
      Buffer.from('stale\u0000', 'utf8'),
    ]);
    expect((await store.get(old))?.outcome).toBe('{"v":"old"}');
    // This version writes NUL-free outcomes as text, so the previous version still reads them.
    const fresh = ref();
    const freshOptions = claimOptions();
    await store.claim(fresh, freshOptions);
    await store.complete(fresh, { fence: 1, owner: freshOptions.owner }, '"new"', 60_000);
    const row = (
      await pool.query(`SELECT outcome, outcome_bytes FROM ${table} WHERE tenant = $1 AND key = $2`, [
        fresh.tenant,
        fresh.key,
      ])
    ).rows[0];
    expect(row).toEqual({ outcome: '"new"', outcome_bytes: null });
    await store.close();
  });
});

describe('Redis errors are classified and name the address', () => {
  it('a down Redis: every error names host:port/db, never the password in the URL', async () => {
    const port = await freePort();
    const client = new Redis(`redis://:${password}@127.0.0.1:${port}/3`, { lazyConnect: false });
    client.on('error', () => undefined);
    // Attached before the connect attempt can fail (it starts on a later tick): no fixed sleep.
    const firstAttemptFailed = new Promise((resolve) => client.once('error', resolve));
    closers.push(() => client.disconnect());
    const store = new RedisStore({ client, prefix, operationTimeoutMs: 300 });
    closers.push(() => store.close());
    await firstAttemptFailed;
    for (const operation of [
      () => store.claim(ref(), claimOptions()),
      () => store.get(ref()),
      () => store.waitForSettle(ref(), { timeoutMs: 50 }),
    ]) {
      const error = await failure(operation());
      expect(StoreUnavailableError.isInstance(error), String(error)).toBe(true);
      expect(error.message).toContain(`RedisStore at 127.0.0.1:${port}/3`);
      expect(`${error.message} ${String(error.stack)}`).not.toContain(password);
    }
  });

  it('a record an older version wrote with retentionMs = MAX_SAFE_INTEGER decodes (no longer stuck) and heals on the next write', async () => {
    const store = new RedisStore({ client: redis, prefix });
    closers.push(() => store.close());
    const target = ref();
    const owner = randomUUID();
    // What the previous claim script wrote for retentionMs = Number.MAX_SAFE_INTEGER: deadlines
    // above 2^53 (doubles that no longer hold the integer they meant).
    await redis.eval(
      `local t = redis.call('TIME')
       local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
       local lease = now + 30000
       local retention = tonumber(ARGV[2])
       local packed = cmsgpack.pack('in_progress', 1, 1, ARGV[1], lease, lease + retention, retention, 'refund', ARGV[3])
       redis.call('SET', KEYS[1], packed, 'PXAT', lease + retention)
       return 1`,
      1,
      store.namesOf(target).key,
      owner,
      String(Number.MAX_SAFE_INTEGER),
      'f'.repeat(64),
    );
    const busy = await store.claim(target, claimOptions());
    // Read as the ceiling 2^52 - 1 (see statements/includes/record.lua): an exact integer on every client.
    expect(busy).toMatchObject({ status: 'busy', record: { owner, expiresAtMs: 2 ** 52 - 1 } });
    const renewed = await store.renew(target, { fence: 1, owner }, 30_000);
    expect(renewed.status).toBe('renewed');
    expect(await store.complete(target, { fence: 1, owner }, '"paid"', 60_000)).toEqual({
      status: 'completed',
    });
    const repeat = await store.claim(target, claimOptions());
    expect(repeat).toMatchObject({ status: 'completed', record: { outcome: '"paid"' } });
    if (repeat.status !== 'completed') throw new Error('expected completed');
    expect(repeat.record.expiresAtMs).toBeLessThan(Date.now() + 120_000);
    expect(await redis.pttl(store.namesOf(target).key)).toBeLessThanOrEqual(60_000);
  });

  it("a script's own refusal is StoreInputError, a script error is StoreConfigurationError, not an outage", async () => {
    const store = new RedisStore({ client: redis, prefix });
    closers.push(() => store.close());
    const target = ref();
    const names = store.namesOf(target);
    // The claim script itself refuses a retention that would decode above 2^53 (rule S4).
    const command = `toolfence_${(await import('../src/redis/statements.js')).packageVersion.replace(/[^0-9A-Za-z]/g, '_')}_claim`;
    const claimScript = (redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[
      command
    ]!;
    const refused = await failure(
      claimScript.call(
        redis,
        names.key,
        'refund',
        'f',
        'o',
        1000,
        Number.MAX_SAFE_INTEGER,
        '0',
        3,
        '0',
        names.channel,
      ),
    );
    expect(refused.message).toMatch(/^TOOLFENCE_INPUT retentionMs/);
    expect(await redis.exists(names.key)).toBe(0);

    // The store's key holding something else (a prefix shared with another application): WRONGTYPE.
    await redis.hset(names.key, 'field', 'value');
    const wrongType = await failure(store.get(target));
    expect(StoreConfigurationError.isInstance(wrongType), String(wrongType)).toBe(true);
    expect(wrongType.message).toContain(`RedisStore at ${redisAddress(new URL(redisUrl))}`);
    await redis.del(names.key);
  });
});
