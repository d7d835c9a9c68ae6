// The store rules S1-S6 (packages/core/docs/store-contract.md), pinned on every store: MemoryStore,
// RedisStore and PostgresStore against the shared servers. Each store is wrapped so the test counts the I/O it does.
import {
  type ClaimOptions,
  type IdempotencyStore,
  MemoryStore,
  type RecordRef,
  StoreInputError,
} from '@toolfence/core';
import { MAX_OUTCOME_LENGTH, MAX_RETENTION_MS, MAX_TIMER_MS } from '@toolfence/core/store';
import { PostgresStore } from '@toolfence/stores/postgres';
import { RedisStore } from '@toolfence/stores/redis';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions as baseClaimOptions, randomRef } from '../support/claims.js';
import { createPool, dropSchema, requirePostgres, uniqueSchemaName } from '../support/postgres.js';
import { connectRedis, countCommands, deletePrefix, randomPrefix } from '../support/redis.js';

interface StoreUnderTest {
  readonly name: string;
  readonly store: IdempotencyStore;
  /** Round trips to the backend so far (0 for the memory store). */
  io(): number;
  /** The backend's clock now (epoch ms), to bound deadlines it computes. */
  clockMs(): Promise<number>;
}

const prefix = randomPrefix('rules');
const schema = uniqueSchemaName('rules');
let redisClient: Redis;
let pool: pg.Pool;
const stores: StoreUnderTest[] = [];

beforeAll(async () => {
  stores.push({
    name: 'MemoryStore',
    store: new MemoryStore(),
    io: () => 0,
    clockMs: async () => Date.now(),
  });

  redisClient = await connectRedis();
  const commands = countCommands(redisClient);
  const redisStore = new RedisStore({ client: redisClient, prefix });
  stores.push({
    name: 'RedisStore',
    store: redisStore,
    io: () => commands.names.length,
    clockMs: async () => {
      const [seconds, micros] = (await redisClient.time()) as [string | number, string | number];
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    },
  });

  await requirePostgres();
  pool = createPool({ max: 10 });
  let statements = 0;
  // A pg Pool that counts the statements the store sends (as bench/suites/postgres.ts does).
  const counted = new Proxy(pool, {
    get(target, property) {
      if (property === 'query') {
        return (...args: unknown[]) => {
          statements += 1;
          return (target.query as (...a: unknown[]) => unknown)(...args);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const postgresStore = new PostgresStore({ pool: counted, schema, autoCleanup: false });
  await postgresStore.ensureSchema();
  stores.push({
    name: 'PostgresStore',
    store: postgresStore,
    io: () => statements,
    clockMs: async () =>
      Number(
        (await pool.query('SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms')).rows[0]
          .ms,
      ),
  });
});

afterAll(async () => {
  for (const each of stores) await each.store.close();
  if (redisClient !== undefined) {
    await deletePrefix(redisClient, prefix);
    redisClient.disconnect();
  }
  if (pool !== undefined) {
    await dropSchema(schema);
    await pool.end();
  }
});

const ref = (): RecordRef => randomRef();
const claimOptions = (overrides: Partial<ClaimOptions> = {}): ClaimOptions =>
  baseClaimOptions({ mode: 'at-most-once', ...overrides });

async function acquire(store: IdempotencyStore, target: RecordRef, overrides: Partial<ClaimOptions> = {}) {
  const options = claimOptions(overrides);
  const claimed = await store.claim(target, options);
  if (claimed.status !== 'acquired') throw new Error(`expected acquired, got ${claimed.status}`);
  return { ...claimed, holder: { fence: claimed.fence, owner: options.owner }, options };
}

function each(name: string, test: (subject: StoreUnderTest) => Promise<void>, timeoutMs = 30_000): void {
  for (const storeName of ['MemoryStore', 'RedisStore', 'PostgresStore']) {
    it(
      `${storeName}: ${name}`,
      async () => {
        const subject = stores.find((candidate) => candidate.name === storeName);
        if (subject === undefined) throw new Error(`${storeName} was not set up`);
        await test(subject);
      },
      timeoutMs,
    );
  }
}

describe('S1: bad input is StoreInputError before any I/O, and nothing is written', () => {
  const badNames: [string, string][] = [
    ['a NUL', 'refund\u0000x'],
    ['3,000 characters', 'x'.repeat(3000)],
    ['a lone surrogate', 'refund\uD800'],
    ['nothing', ''],
  ];

  each('claim refuses a bad tenant, tool, key, owner, fingerprint or duration', async ({ store, io }) => {
    const good = ref();
    const cases: [string, RecordRef, ClaimOptions][] = [];
    for (const [label, bad] of badNames) {
      cases.push([`tool with ${label}`, good, claimOptions({ tool: bad })]);
      cases.push([`tenant with ${label}`, { ...good, tenant: bad }, claimOptions()]);
      cases.push([`key with ${label}`, { ...good, key: bad }, claimOptions()]);
      cases.push([`owner with ${label}`, good, claimOptions({ owner: bad })]);
      cases.push([`fingerprint with ${label}`, good, claimOptions({ fingerprint: bad })]);
    }
    for (const retentionMs of [0, -1, 1.5, Number.NaN, MAX_RETENTION_MS + 1, Number.MAX_SAFE_INTEGER]) {
      cases.push([`retentionMs ${retentionMs}`, good, claimOptions({ retentionMs })]);
    }
    for (const leaseMs of [0, -1, 2.5, MAX_TIMER_MS + 1, Number.POSITIVE_INFINITY]) {
      cases.push([`leaseMs ${leaseMs}`, good, claimOptions({ leaseMs })]);
    }
    for (const maxAttempts of [0, 1001, 1.5])
      cases.push([`maxAttempts ${maxAttempts}`, good, claimOptions({ maxAttempts })]);
    const before = io();
    for (const [label, target, options] of cases) {
      const error = await store.claim(target, options).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(StoreInputError.isInstance(error), `${label}: ${String(error)}`).toBe(true);
    }
    expect(io() - before, 'round trips spent on refused input').toBe(0);
    expect(await store.get(good)).toBeNull();
  });

  each(
    'every other operation refuses a bad reference, holder, outcome or error before any I/O',
    async ({ store, io }) => {
      const target = ref();
      const claimed = await acquire(store, target);
      const bad = { ...target, tenant: 'x'.repeat(3000) };
      const before = io();
      const attempts: [string, () => Promise<unknown>][] = [
        ['renew ref', () => store.renew(bad, claimed.holder, 1000)],
        ['renew lease', () => store.renew(target, claimed.holder, 0)],
        ['renew owner', () => store.renew(target, { fence: 1, owner: 'a\u0000' }, 1000)],
        [
          'complete fence',
          () => store.complete(target, { fence: 0, owner: claimed.holder.owner }, '"v"', 1000),
        ],
        ['complete outcome', () => store.complete(target, claimed.holder, 'bad \uDC00', 1000)],
        [
          'complete too long',
          () => store.complete(target, claimed.holder, 'x'.repeat(MAX_OUTCOME_LENGTH + 1), 1000),
        ],
        ['complete retention', () => store.complete(target, claimed.holder, '"v"', Number.MAX_SAFE_INTEGER)],
        ['release ref', () => store.release({ ...target, key: '' }, claimed.holder)],
        [
          'markIndeterminate error',
          () => store.markIndeterminate(target, claimed.holder, { type: 'E', message: 'a\u0000b' }, 1000),
        ],
        [
          'markIndeterminate type',
          () => store.markIndeterminate(target, claimed.holder, { type: '', message: 'm' }, 1000),
        ],
        ['get ref', () => store.get({ tenant: 'a\u0000', key: target.key })],
        ['resolve outcome', () => store.resolve(target, { outcome: '\uD800' }, 1000)],
        ['resolve retention', () => store.resolve(target, { outcome: '"v"' }, 0)],
        ['forget tenant', () => store.forget({ tenant: 'x'.repeat(3000) })],
        ['waitForSettle ref', () => store.waitForSettle(bad, { timeoutMs: 10 })],
        ['waitForSettle timeout', () => store.waitForSettle(target, { timeoutMs: -1 })],
      ];
      for (const [label, attempt] of attempts) {
        const error = await attempt().then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(StoreInputError.isInstance(error), `${label}: ${String(error)}`).toBe(true);
      }
      expect(io() - before, 'round trips spent on refused input').toBe(0);
      expect(await store.get(target)).toMatchObject({
        state: 'in_progress',
        fence: 1,
        owner: claimed.holder.owner,
      });
    },
  );
});

describe('S4: the longest durations read back as the exact deadlines the store wrote', () => {
  each('claim, renew and complete at MAX_TIMER_MS / MAX_RETENTION_MS', async ({ store, clockMs }) => {
    const target = ref();
    const startedMs = await clockMs();
    const claimed = await acquire(store, target, { leaseMs: MAX_TIMER_MS, retentionMs: MAX_RETENTION_MS });
    const afterClaimMs = await clockMs();
    expect(Number.isSafeInteger(claimed.leaseExpiresAtMs)).toBe(true);
    expect(claimed.leaseExpiresAtMs).toBeGreaterThanOrEqual(startedMs - 5 + MAX_TIMER_MS);
    expect(claimed.leaseExpiresAtMs).toBeLessThanOrEqual(afterClaimMs + 5 + MAX_TIMER_MS);
    const read = await store.get(target);
    expect(read?.leaseExpiresAtMs).toBe(claimed.leaseExpiresAtMs);
    expect(read?.expiresAtMs).toBe(claimed.leaseExpiresAtMs + MAX_RETENTION_MS);

    // A repeat (another owner) decodes the same record: it is busy, never an undecodable reply.
    const repeat = await store.claim(
      target,
      claimOptions({ leaseMs: MAX_TIMER_MS, retentionMs: MAX_RETENTION_MS }),
    );
    expect(repeat).toMatchObject({ status: 'busy', record: { leaseExpiresAtMs: claimed.leaseExpiresAtMs } });

    const renewed = await store.renew(target, claimed.holder, MAX_TIMER_MS);
    if (renewed.status !== 'renewed') throw new Error(`expected renewed, got ${renewed.status}`);
    const afterRenew = await store.get(target);
    expect(afterRenew?.leaseExpiresAtMs).toBe(renewed.leaseExpiresAtMs);
    expect(afterRenew?.expiresAtMs).toBe(renewed.leaseExpiresAtMs + MAX_RETENTION_MS);

    const beforeCompleteMs = await clockMs();
    expect(await store.complete(target, claimed.holder, '"done"', MAX_RETENTION_MS)).toEqual({
      status: 'completed',
    });
    const afterCompleteMs = await clockMs();
    const completed = await store.get(target);
    expect(Number.isSafeInteger(completed?.expiresAtMs)).toBe(true);
    expect(completed?.expiresAtMs).toBeGreaterThanOrEqual(beforeCompleteMs - 5 + MAX_RETENTION_MS);
    expect(completed?.expiresAtMs).toBeLessThanOrEqual(afterCompleteMs + 5 + MAX_RETENTION_MS);
    for (let repeatIndex = 0; repeatIndex < 3; repeatIndex++) {
      expect(await store.claim(target, claimOptions({ retentionMs: MAX_RETENTION_MS }))).toEqual({
        status: 'completed',
        record: completed,
      });
    }
  });
});

describe('S2: outcomes are byte-exact', () => {
  const outcomes: [string, string][] = [
    ['NUL alone', '\u0000'],
    ['NUL inside JSON', '{"text":"a\u0000b","n":1}'],
    ['astral characters', '😀𝄞\u{10FFFF}'],
    ['NUL and astral', '\u0000😀\u0000'],
    ['empty', ''],
    ['control characters and a BOM', '\u0001\u001f\u007f\uFEFF'],
  ];

  each('get and a repeat claim return every outcome ===, NUL included', async ({ store }) => {
    for (const [label, outcome] of outcomes) {
      const target = ref();
      const claimed = await acquire(store, target);
      expect(await store.complete(target, claimed.holder, outcome, 60_000), label).toEqual({
        status: 'completed',
      });
      expect((await store.get(target))?.outcome === outcome, `${label} by get`).toBe(true);
      const repeat = await store.claim(target, claimOptions());
      expect(repeat.status === 'completed' && repeat.record.outcome === outcome, `${label} by claim`).toBe(
        true,
      );
    }
  });

  each('an operator resolve with NUL is byte-exact too', async ({ store }) => {
    const target = ref();
    const claimed = await acquire(store, target);
    await store.markIndeterminate(target, claimed.holder, { type: 'Lost', message: 'm' }, 60_000);
    expect(await store.resolve(target, { outcome: 'x\u0000y😀' }, 60_000)).toEqual({ status: 'resolved' });
    expect((await store.get(target))?.outcome === 'x\u0000y😀').toBe(true);
  });

  each(
    '1 MB and 4 MB outcomes (with and without NUL, astral characters inside) come back ===',
    async ({ store }) => {
      // With NUL (PostgreSQL: the bytea column) and without (the text column).
      for (const [unit, length] of [
        ['abc\u0000😀é', 1_048_576],
        ['abc\u0000😀é', 4_194_304],
        ['abc😀é"\\', 4_194_304],
      ] as const) {
        const outcome = unit.repeat(Math.ceil(length / unit.length)).slice(0, length - 1) + '!';
        const target = ref();
        const claimed = await acquire(store, target);
        expect(await store.complete(target, claimed.holder, outcome, 60_000)).toEqual({
          status: 'completed',
        });
        const read = await store.get(target);
        expect(read?.outcome?.length).toBe(outcome.length);
        expect(read?.outcome === outcome).toBe(true);
        const repeat = await store.claim(target, claimOptions());
        expect(repeat.status === 'completed' && repeat.record.outcome === outcome).toBe(true);
      }
    },
    60_000,
  );
});

describe('S2: the 16 Mi code unit limit', () => {
  each(
    'an outcome of exactly MAX_OUTCOME_LENGTH code units (NUL and astral characters inside) is stored and read back ===',
    async ({ store }) => {
      const outcome = `\u0000😀${'x'.repeat(MAX_OUTCOME_LENGTH - 5)}\u0000!`;
      expect(outcome.length).toBe(MAX_OUTCOME_LENGTH);
      const target = ref();
      const claimed = await acquire(store, target);
      expect(await store.complete(target, claimed.holder, outcome, 60_000)).toEqual({ status: 'completed' });
      const repeat = await store.claim(target, claimOptions());
      expect(repeat.status === 'completed' && repeat.record.outcome === outcome).toBe(true);
      // One more code unit is refused before anything is sent (S1 pins the I/O count).
      const other = ref();
      const otherClaim = await acquire(store, other);
      const error = await store.complete(other, otherClaim.holder, `${outcome}y`, 60_000).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(StoreInputError.isInstance(error)).toBe(true);
    },
    120_000,
  );
});

describe('S3: retention of an in-progress record counts from its last renewal', () => {
  each('a renewed record keeps expiresAtMs >= its new leaseExpiresAtMs + retentionMs', async ({ store }) => {
    const target = ref();
    const retentionMs = 5_000;
    const claimed = await acquire(store, target, { leaseMs: 1_000, retentionMs });
    expect((await store.get(target))?.expiresAtMs).toBeGreaterThanOrEqual(
      claimed.leaseExpiresAtMs + retentionMs,
    );
    for (const leaseMs of [20_000, 60_000]) {
      const renewed = await store.renew(target, claimed.holder, leaseMs);
      if (renewed.status !== 'renewed') throw new Error(`expected renewed, got ${renewed.status}`);
      const record = await store.get(target);
      expect(record?.leaseExpiresAtMs).toBe(renewed.leaseExpiresAtMs);
      expect(record?.expiresAtMs).toBeGreaterThanOrEqual(renewed.leaseExpiresAtMs + retentionMs);
    }
  });
});

describe('S6: a lease_expired wake-up is never followed by a busy claim for that lease', () => {
  each(
    '100 rounds of short leases',
    async ({ store }) => {
      const busyRounds: number[] = [];
      for (let round = 0; round < 100; round++) {
        const target = ref();
        await acquire(store, target, { leaseMs: 1 + (round % 5), mode: 'at-least-once', maxAttempts: 5 });
        const woke = await store.waitForSettle(target, { timeoutMs: 2_000 });
        expect(woke).toBe('lease_expired');
        const next = await store.claim(target, claimOptions({ mode: 'at-least-once', maxAttempts: 5 }));
        if (next.status === 'busy') busyRounds.push(round);
      }
      expect(busyRounds).toEqual([]);
    },
    60_000,
  );
});
