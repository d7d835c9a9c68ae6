// RedisStore against a real Redis (REDIS_URL): the store's behaviour, and what is specific to
// Redis (round trips, record size, names, script registration, the shared subscriber, failures).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import type { ClaimOptions, ClaimResult, IdempotencyStore, RecordRef } from '@toolfence/core';
import { StoreInputError, StoreUnavailableError } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  connectRedis,
  countCommands,
  deletePrefix,
  freePort,
  keysUnder,
  randomPrefix,
  redisUrl,
  sleep,
  startRedisServer,
} from '../../../test/support/redis.js';
import { seededRandom } from '../../../test/support/seeded-random.js';
import { waitFor, waitForValue } from '../../../test/support/wait-for.js';
import { tenantNames } from '../src/redis/names.js';
import { scripts } from '../src/redis/statements.js';

const prefix = randomPrefix('store');
let client: Redis;
let store: RedisStore;
const extraClients: Redis[] = [];
const extraStores: RedisStore[] = [];

beforeAll(async () => {
  client = await connectRedis({ connectionName: `tf-${prefix}` });
  store = new RedisStore({ client, prefix });
});

afterAll(async () => {
  await Promise.all([store, ...extraStores].map((each) => each?.close()));
  if (client !== undefined) {
    await deletePrefix(client, prefix);
    expect(await keysUnder(client, prefix)).toEqual([]);
  }
  for (const each of extraClients) each.disconnect();
  client?.disconnect();
});

function newRef(tenant = 'acme'): RecordRef {
  return { tenant, key: randomBytes(32).toString('hex') };
}

function claimOptions(overrides: Partial<ClaimOptions> = {}): ClaimOptions {
  return {
    tool: 'book_seat',
    fingerprint: 'f'.repeat(64),
    owner: randomUUID(),
    leaseMs: 10_000,
    retentionMs: 60_000,
    mode: 'at-least-once',
    maxAttempts: 3,
    checkFingerprint: false,
    ...overrides,
  };
}

async function acquire(ref: RecordRef, overrides: Partial<ClaimOptions> = {}, on: IdempotencyStore = store) {
  const options = claimOptions(overrides);
  const result = await on.claim(ref, options);
  if (result.status !== 'acquired') throw new Error(`expected acquired, got ${result.status}`);
  return { ...result, owner: options.owner, holder: { fence: result.fence, owner: options.owner } };
}

async function redisNowMs(): Promise<number> {
  const [seconds, microseconds] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(microseconds) / 1000);
}

async function newClient(): Promise<Redis> {
  const extra = await connectRedis();
  extraClients.push(extra);
  return extra;
}

function newStore(
  on: Redis,
  options: { commandTimeoutMs?: number; claim?: 'auto' | 'script' } = {},
): RedisStore {
  const created = new RedisStore({ client: on, prefix, ...options });
  extraStores.push(created);
  return created;
}

describe('claims', () => {
  it('lets exactly one of 50 racing claims from 5 connections acquire; the others see busy', async () => {
    const stores = await Promise.all(Array.from({ length: 5 }, async () => newStore(await newClient())));
    const ref = newRef();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, index) => stores[index % 5]!.claim(ref, claimOptions())),
    );
    const statuses = results.map((result) => result.status);
    expect(statuses.filter((status) => status === 'acquired')).toHaveLength(1);
    expect(statuses.filter((status) => status === 'busy')).toHaveLength(49);
    const winner = results.find((result) => result.status === 'acquired') as Extract<
      ClaimResult,
      { status: 'acquired' }
    >;
    expect(winner).toMatchObject({ fence: 1, attempt: 1, takeover: false });
    for (const result of results) {
      if (result.status !== 'busy') continue;
      expect(result.record).toMatchObject({ state: 'in_progress', fence: 1, attempt: 1, tool: 'book_seat' });
      expect(result.record.leaseExpiresAtMs).toBe(winner.leaseExpiresAtMs);
      expect(result.nowMs).toBeLessThan(result.record.leaseExpiresAtMs);
    }
  });

  it('replays a completed call with its outcome and the full record', async () => {
    const ref = newRef();
    const { holder } = await acquire(ref);
    expect(await store.complete(ref, holder, '{"seat":"12A"}', 60_000)).toEqual({ status: 'completed' });
    const replay = await store.claim(ref, claimOptions());
    expect(replay.status).toBe('completed');
    if (replay.status !== 'completed') return;
    expect(replay.record).toMatchObject({
      key: ref.key,
      tenant: ref.tenant,
      tool: 'book_seat',
      fingerprint: 'f'.repeat(64),
      state: 'completed',
      fence: 1,
      attempt: 1,
      owner: holder.owner,
      outcome: '{"seat":"12A"}',
    });
    expect(replay.record.error).toBeUndefined();
    const now = await redisNowMs();
    expect(replay.record.expiresAtMs).toBeGreaterThan(now + 59_000);
    expect(replay.record.expiresAtMs).toBeLessThanOrEqual(now + 60_000);
  });

  it('answers a repeat from the stored string exactly as get reads the record (every field, a resolution, a codec)', async () => {
    const options = {
      retentionMs: 60_000,
      runId: 'run-1',
      callId: 'call-1',
      description: 'déjà vu ✓',
      codec: 'json',
    };
    const completed = newRef();
    const held = await acquire(completed, options);
    await store.complete(completed, held.holder, 'ünïcode outcome 🎉', 60_000);
    const marked = newRef();
    const markedHeld = await acquire(marked, options);
    await store.markIndeterminate(
      marked,
      markedHeld.holder,
      { type: 'Timeout', message: 'no answer' },
      60_000,
    );
    const resolved = newRef();
    const resolvedHeld = await acquire(resolved, options);
    await store.markIndeterminate(resolved, resolvedHeld.holder, { type: 'T', message: 'm' }, 60_000);
    await store.resolve(resolved, { outcome: '"fixed"', by: 'ops', reason: 'checked' }, 60_000);
    const abandoned = newRef();
    await acquire(abandoned, { leaseMs: 1, maxAttempts: 1, mode: 'at-least-once' });
    await sleep(5);
    expect((await store.claim(abandoned, claimOptions({ maxAttempts: 1 }))).status).toBe('abandoned');
    for (const [ref, status] of [
      [completed, 'completed'],
      [marked, 'indeterminate'],
      [resolved, 'completed'],
      [abandoned, 'abandoned'],
    ] as const) {
      const repeat = await store.claim(ref, claimOptions());
      expect(repeat.status).toBe(status);
      expect((repeat as { record: unknown }).record).toEqual(await store.get(ref));
    }
    const replayed = (await store.claim(resolved, claimOptions())) as { record: { resolution?: unknown } };
    expect(replayed.record.resolution).toMatchObject({ by: 'ops', reason: 'checked', action: 'completed' });
    // Another tool is a conflict, judged on the client from the string.
    expect((await store.claim(completed, claimOptions({ tool: 'other' }))).status).toBe('conflict');
    const fingerprint = claimOptions({ fingerprint: 'e'.repeat(64), checkFingerprint: true });
    expect((await store.claim(completed, fingerprint)).status).toBe('conflict');
    expect((await store.claim(completed, { ...fingerprint, checkFingerprint: false })).status).toBe(
      'completed',
    );
  });

  it('reports a conflict for another tool, and for another fingerprint only when asked', async () => {
    const ref = newRef();
    await acquire(ref);
    const otherTool = await store.claim(ref, claimOptions({ tool: 'refund' }));
    expect(otherTool.status).toBe('conflict');
    const otherArguments = await store.claim(ref, claimOptions({ fingerprint: 'e'.repeat(64) }));
    expect(otherArguments.status).toBe('busy');
    const checked = await store.claim(
      ref,
      claimOptions({ fingerprint: 'e'.repeat(64), checkFingerprint: true }),
    );
    expect(checked.status).toBe('conflict');
    if (checked.status === 'conflict') expect(checked.record.fingerprint).toBe('f'.repeat(64));
  });

  it('takes an expired lease over with fence 2 and rejects the late result of fence 1', async () => {
    const ref = newRef();
    const first = await acquire(ref, { leaseMs: 100 });
    await sleep(150);
    const second = await acquire(ref, { leaseMs: 10_000 });
    expect(second).toMatchObject({ fence: 2, attempt: 2, takeover: true });
    const late = await store.complete(ref, first.holder, 'from A', 60_000);
    expect(late.status).toBe('stale');
    if (late.status === 'stale') expect(late.record).toMatchObject({ state: 'in_progress', fence: 2 });
    expect(await store.renew(ref, first.holder, 1000)).toEqual({ status: 'lost', reason: 'stale' });
    expect((await store.release(ref, first.holder)).status).toBe('stale');
    expect(
      (await store.markIndeterminate(ref, first.holder, { type: 'E', message: 'm' }, 60_000)).status,
    ).toBe('stale');
    expect(await store.complete(ref, second.holder, 'from B', 60_000)).toEqual({ status: 'completed' });
    expect((await store.get(ref))?.outcome).toBe('from B');
  });

  it('tells two lives of a key apart by owner: a stalled holder cannot write into a new life', async () => {
    const ref = newRef();
    const first = await acquire(ref);
    expect(await store.release(ref, first.holder)).toEqual({ status: 'released' });
    const second = await acquire(ref);
    expect(second.fence).toBe(1);
    const late = await store.complete(ref, first.holder, 'old life', 60_000);
    expect(late.status).toBe('stale');
    expect((await store.get(ref))?.owner).toBe(second.owner);
  });

  it('marks an expired at-most-once lease indeterminate (LeaseExpired) and never re-runs it', async () => {
    const ref = newRef();
    await acquire(ref, { leaseMs: 50, mode: 'at-most-once' });
    await sleep(100);
    const result = await store.claim(ref, claimOptions({ mode: 'at-most-once' }));
    expect(result.status).toBe('indeterminate');
    if (result.status !== 'indeterminate') return;
    expect(result.record).toMatchObject({ state: 'indeterminate', fence: 1, attempt: 1 });
    expect(result.record.error?.type).toBe('LeaseExpired');
    expect((await store.claim(ref, claimOptions({ mode: 'at-most-once' }))).status).toBe('indeterminate');
  });

  it('abandons an at-least-once call after maxAttempts lost attempts', async () => {
    const ref = newRef();
    await acquire(ref, { leaseMs: 50, maxAttempts: 2 });
    await sleep(80);
    const second = await acquire(ref, { leaseMs: 50, maxAttempts: 2 });
    expect(second.attempt).toBe(2);
    await sleep(80);
    const third = await store.claim(ref, claimOptions({ maxAttempts: 2 }));
    expect(third.status).toBe('abandoned');
    if (third.status === 'abandoned') {
      expect(third.record).toMatchObject({ state: 'abandoned', attempt: 2, fence: 2 });
      expect(third.record.error?.type).toBe('LeaseExpired');
    }
  });

  it('answers a resent claim or complete (ioredis resends after a lost reply) as the first run did', async () => {
    const ref = newRef();
    const options = claimOptions({ leaseMs: 5000 });
    const first = await store.claim(ref, options);
    expect(first).toMatchObject({ status: 'acquired', fence: 1, attempt: 1, takeover: false });
    const resent = await store.claim(ref, options);
    expect(resent).toMatchObject({ status: 'acquired', fence: 1, attempt: 1, takeover: false });
    expect((await store.claim(ref, claimOptions())).status).toBe('busy');
    const holder = { fence: 1, owner: options.owner };
    expect(await store.complete(ref, holder, 'outcome', 60_000)).toEqual({ status: 'completed' });
    expect(await store.complete(ref, holder, 'outcome', 60_000)).toEqual({ status: 'completed' });
    const different = await store.complete(ref, holder, 'another outcome', 60_000);
    expect(different.status).toBe('stale');
    expect((await store.get(ref))?.outcome).toBe('outcome');
    // After it settled, the same owner's claim is a replay like anyone's.
    expect((await store.claim(ref, options)).status).toBe('completed');

    const takenOver = newRef();
    await acquire(takenOver, { leaseMs: 30 });
    await sleep(60);
    const takeoverOptions = claimOptions();
    expect(await store.claim(takenOver, takeoverOptions)).toMatchObject({
      status: 'acquired',
      fence: 2,
      takeover: true,
    });
    expect(await store.claim(takenOver, takeoverOptions)).toMatchObject({
      status: 'acquired',
      fence: 2,
      takeover: true,
    });
  });

  it('judges deadlines by the Redis clock, not the worker clock', async () => {
    const skew = vi.spyOn(Date, 'now').mockReturnValue(Date.UTC(2099, 0, 1));
    try {
      const ref = newRef();
      const before = await redisNowMs();
      const claimed = await acquire(ref, { leaseMs: 5000 });
      const after = await redisNowMs();
      expect(claimed.leaseExpiresAtMs).toBeGreaterThanOrEqual(before + 5000);
      expect(claimed.leaseExpiresAtMs).toBeLessThanOrEqual(after + 5000);
    } finally {
      skew.mockRestore();
    }
  });

  it('refuses a lease or retention that is not a positive integer instead of storing "no expiry"', async () => {
    const ref = newRef();
    await expect(store.claim(ref, claimOptions({ leaseMs: 0 }))).rejects.toThrow(StoreInputError);
    await expect(store.claim(ref, claimOptions({ leaseMs: -5 }))).rejects.toThrow(StoreInputError);
    await expect(store.claim(ref, claimOptions({ retentionMs: Number.NaN }))).rejects.toThrow(
      StoreInputError,
    );
    expect(await store.get(ref)).toBeNull();
  });
});

describe('renew, release, markIndeterminate, resolve', () => {
  it('renews the current holder by the Redis clock and reports settled and missing records', async () => {
    const ref = newRef();
    const claimed = await acquire(ref, { leaseMs: 1000 });
    await sleep(20);
    const renewed = await store.renew(ref, claimed.holder, 5000);
    expect(renewed.status).toBe('renewed');
    if (renewed.status === 'renewed') {
      expect(renewed.leaseExpiresAtMs).toBeGreaterThan(claimed.leaseExpiresAtMs + 3900);
      expect((await store.get(ref))?.leaseExpiresAtMs).toBe(renewed.leaseExpiresAtMs);
    }
    await store.complete(ref, claimed.holder, 'done', 60_000);
    expect(await store.renew(ref, claimed.holder, 5000)).toEqual({ status: 'lost', reason: 'settled' });
    expect(await store.renew(newRef(), claimed.holder, 5000)).toEqual({
      status: 'lost',
      reason: 'not_found',
    });
  });

  it('keeps an in-progress record past its lease until a retention window after it', async () => {
    const ref = newRef();
    const claimed = await acquire(ref, { leaseMs: 1000, retentionMs: 5000 });
    const pttl = await client.pttl(store.namesOf(ref).key);
    expect(pttl).toBeGreaterThan(5500);
    expect(pttl).toBeLessThanOrEqual(6000);
    expect((await store.get(ref))?.expiresAtMs).toBe(claimed.leaseExpiresAtMs + 5000);
  });

  it('releases only an in-progress record of the current holder; the key is free again', async () => {
    const ref = newRef();
    const claimed = await acquire(ref);
    expect(await store.release(ref, claimed.holder)).toEqual({ status: 'released' });
    expect(await store.get(ref)).toBeNull();
    expect(await client.exists(store.namesOf(ref).key)).toBe(0);
    expect(await store.release(ref, claimed.holder)).toEqual({ status: 'not_found' });
    const again = await acquire(ref);
    await store.complete(ref, again.holder, 'x', 60_000);
    const released = await store.release(ref, again.holder);
    expect(released.status).toBe('stale');
    if (released.status === 'stale') expect(released.record.state).toBe('completed');
  });

  it('marks indeterminate with the error, and the same holder may still state the outcome', async () => {
    const ref = newRef();
    const claimed = await acquire(ref, { mode: 'at-most-once' });
    const error = { type: 'TimeoutError', message: 'gateway timed out — ¿qué pasó?' };
    expect(await store.markIndeterminate(ref, claimed.holder, error, 60_000)).toEqual({ status: 'marked' });
    const record = await store.get(ref);
    expect(record).toMatchObject({ state: 'indeterminate', error });
    expect(record?.outcome).toBeUndefined();
    // The same command again (ioredis resends one whose reply was lost) is answered the same way.
    expect(await store.markIndeterminate(ref, claimed.holder, error, 60_000)).toEqual({ status: 'marked' });
    const other = { type: 'OtherError', message: 'another story' };
    expect((await store.markIndeterminate(ref, claimed.holder, other, 60_000)).status).toBe('stale');
    expect((await store.get(ref))?.error).toEqual(error);
    expect(await store.complete(ref, claimed.holder, 'it did happen', 60_000)).toEqual({
      status: 'completed',
    });
    const completed = await store.get(ref);
    expect(completed).toMatchObject({ state: 'completed', outcome: 'it did happen' });
    expect(completed?.error).toBeUndefined();
    expect((await store.complete(ref, claimed.holder, 'again', 60_000)).status).toBe('stale');
  });

  it('resolves indeterminate and abandoned records, never a live holder, as completed or released', async () => {
    const completedRef = newRef();
    const a = await acquire(completedRef, { mode: 'at-most-once' });
    await store.markIndeterminate(completedRef, a.holder, { type: 'E', message: 'unknown' }, 60_000);
    expect(await store.resolve(completedRef, { outcome: '{"refund":"R-1"}' }, 30_000)).toEqual({
      status: 'resolved',
    });
    const resolved = await store.get(completedRef);
    expect(resolved).toMatchObject({ state: 'completed', outcome: '{"refund":"R-1"}', fence: 1 });
    expect(resolved!.expiresAtMs - (await redisNowMs())).toBeGreaterThan(29_000);
    const notResolvable = await store.resolve(completedRef, { released: true }, 30_000);
    expect(notResolvable.status).toBe('not_resolvable');

    const releasedRef = newRef();
    await acquire(releasedRef, { leaseMs: 30, maxAttempts: 1 });
    await sleep(60);
    expect((await store.claim(releasedRef, claimOptions({ maxAttempts: 1 }))).status).toBe('abandoned');
    expect(await store.resolve(releasedRef, { released: true }, 30_000)).toEqual({ status: 'resolved' });
    expect(await store.get(releasedRef)).toBeNull();
    expect((await store.claim(releasedRef, claimOptions())).status).toBe('acquired');
    // In progress under a live lease: its body may still take effect (issue #27).
    expect((await store.resolve(releasedRef, { released: true }, 30_000)).status).toBe('holder_alive');
    expect(await store.resolve(newRef(), { released: true }, 30_000)).toEqual({ status: 'not_found' });
  });
});

describe('retention and forget', () => {
  it('drops a record after its retention window (Redis expiry), freeing the key', async () => {
    const ref = newRef();
    const claimed = await acquire(ref);
    await store.complete(ref, claimed.holder, 'short-lived', 200);
    const pttl = await client.pttl(store.namesOf(ref).key);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(200);
    expect((await store.claim(ref, claimOptions())).status).toBe('completed');
    await sleep(300);
    expect(await store.get(ref)).toBeNull();
    const fresh = await acquire(ref);
    expect(fresh).toMatchObject({ fence: 1, attempt: 1, takeover: false });
  });

  it('sweeps the index entries of expired records on a new-record claim drawn 1 in 16, up to 64 (issue 22; the claim script)', async () => {
    const tenant = `sweep-${randomUUID()}`;
    // The scripted claim (Redis 6.2) sweeps; natively the complete does (native-claim.redis.test.ts).
    const sweeping = new RedisStore({ client, prefix, claim: 'script' });
    extraStores.push(sweeping);
    const { index, expiry } = tenantNames(prefix, tenant);
    // Claimed first, then completed (complete never sweeps): no entry is due while they are written.
    const refs = Array.from({ length: 100 }, () => newRef(tenant));
    const claims = await Promise.all(refs.map((ref) => acquire(ref, {}, sweeping)));
    await Promise.all(refs.map((ref, at) => sweeping.complete(ref, claims[at]!.holder, 'x', 100)));
    expect(await client.zcard(index)).toBe(100);
    expect(await client.zcard(expiry)).toBe(101); // and the tenant's name
    await sleep(250); // the 100 records expire; their entries stay until a sweep
    expect(await client.zcard(index)).toBe(100);
    const changes: number[] = [];
    let size = 100;
    // The store draws each claim's sweep with Math.random() (< 1/16 sweeps): the 6th draw does.
    const draws = vi.spyOn(Math, 'random');
    try {
      for (let count = 0; count < 16; count++) {
        draws.mockReturnValueOnce(count === 5 ? 0.06 : 0.07);
        await acquire(newRef(tenant), {}, sweeping);
        const next = await client.zcard(index);
        changes.push(next - size);
        size = next;
      }
    } finally {
      draws.mockRestore();
    }
    // Exactly one of 16 consecutive claims swept, 64 entries; the others only added their own.
    expect(changes.filter((change) => change === 1)).toHaveLength(15);
    expect(changes[5]).toBe(1 - 64);
    expect(size).toBe(100 + 16 - 64);
    expect(await client.zcard(expiry)).toBe(size + 1);
    // The entries left behind are never listed: list reads each record.
    const page = await sweeping.list({ tenant, states: ['in_progress', 'completed'], limit: 100 });
    expect(page.records).toHaveLength(16);
    expect(page.records.every((record) => record.state === 'in_progress')).toBe(true);
  });

  it('sweeps every tenant whatever the order of claims: 16 tenants claimed in turn each get swept', async () => {
    // A store counting its claims and sweeping on every 16th swept only the tenant that happened
    // to come at that count: with 16 tenants claimed in turn (a batch loop over tenants) the other
    // 15 tenants' expiry indexes kept every entry of their expired records for ever.
    // The store's 1-in-16 draw comes from a seeded generator here, so the test is exact: with
    // Math.random a tenant is never swept in 64 claims with p = (15/16)^64 = 1.6 %, and two of 16
    // tenants (the bound below) about 3 % of the time.
    const draws = vi.spyOn(Math, 'random').mockImplementation(seededRandom(0x5eed));
    const sweeping = new RedisStore({ client, prefix });
    extraStores.push(sweeping);
    const tenants = Array.from({ length: 16 }, (_, at) => `turns-${at}-${randomUUID()}`);
    const rounds = 64;
    try {
      for (let round = 0; round < rounds; round++) {
        for (const tenant of tenants) {
          await acquire(newRef(tenant), { leaseMs: 1, retentionMs: 1 }, sweeping);
        }
      }
    } finally {
      draws.mockRestore();
    }
    await sleep(20); // every record is past its retention now
    const now = await redisNowMs();
    const stale = await Promise.all(
      tenants.map((tenant) => client.zcount(tenantNames(prefix, tenant).expiry, '-inf', now)),
    );
    const total = stale.reduce((sum, count) => sum + count, 0);
    // 4 entries swept per claim on average: about 16 stale entries per tenant remain (the claims
    // since its last sweep), never most of them.
    expect(total, `stale entries per tenant ${stale.join(' ')}`).toBeLessThan((rounds * tenants.length) / 2);
    expect(stale.filter((count) => count === rounds).length, 'tenants never swept').toBeLessThanOrEqual(1);
  });

  it('leaves nothing of a tenant that goes quiet: its indexes expire with its last record (issue 30, item 2)', async () => {
    // 20 tenants x 25 calls, then silence. Sweeps ran only on later claims of the same tenant, so
    // a dormant tenant's index entries stayed for ever (20,020 entries, 3.65 MB for 20 x 500).
    const quiet = new RedisStore({ client, prefix });
    extraStores.push(quiet);
    const tenants = Array.from({ length: 20 }, (_, at) => `quiet-${at}-${randomUUID()}`);
    // Long enough that a loaded machine reads the TTLs before the first records expire.
    const retentionMs = 2_000;
    await Promise.all(
      tenants.map(async (tenant) => {
        for (let call = 0; call < 25; call++) {
          const ref = newRef(tenant);
          const claimed = await acquire(ref, { leaseMs: 100, retentionMs }, quiet);
          if (call % 5 === 0)
            await quiet.markIndeterminate(ref, claimed.holder, { type: 'T', message: 'm' }, retentionMs);
          else await quiet.complete(ref, claimed.holder, '"done"', retentionMs);
        }
      }),
    );
    const names = tenants.flatMap((tenant) => Object.values(tenantNames(prefix, tenant)));
    // While records live, every index has an expiry no earlier than its latest record's deadline.
    const ttls = await Promise.all(names.map((name) => client.pttl(name)));
    // A claim's deadline is its lease plus retention, and the slack one retention: at most
    // 100 + 2 x retention from the last write, and never gone while a record it names lives.
    expect(
      ttls.every((ttl) => ttl > 0 && ttl <= 100 + 2 * retentionMs),
      `index TTLs ${ttls.join(' ')}`,
    ).toBe(true);
    // Past every record's retention plus the index's slack, nothing is left, with no claim since.
    await waitFor(
      async () =>
        (await Promise.all(names.map((name) => client.exists(name)))).reduce((sum, one) => sum + one, 0),
      (left) => left === 0,
      { message: "the quiet tenants' indexes to expire", timeoutMs: 15_000 },
    );
  });

  it('keeps an index while any record it names lives: a long-lived record extends it, short ones after it do not shorten it', async () => {
    const tenant = `mixed-${randomUUID()}`;
    const long = newRef(tenant);
    const held = await acquire(long, { retentionMs: 60_000 });
    await store.complete(long, held.holder, '"kept"', 60_000);
    for (let call = 0; call < 5; call++) {
      const ref = newRef(tenant);
      await store.complete(ref, (await acquire(ref, { retentionMs: 50 })).holder, '"short"', 50);
    }
    const { index, expiry } = tenantNames(prefix, tenant);
    for (const name of [index, expiry]) expect(await client.pttl(name)).toBeGreaterThan(59_000);
    // An index a previous version left without an expiry gets one on the tenant's next indexed
    // write (a native claim writes no index entry; its complete does).
    await client.persist(expiry);
    const next = newRef(tenant);
    await store.complete(next, (await acquire(next, { retentionMs: 1_000 })).holder, '"next"', 1_000);
    expect(await client.pttl(expiry)).toBeGreaterThan(59_000);
  });

  it('sweeps when every key is claimed twice (new, then a repeat that never sweeps)', async () => {
    // Counted, the sweep fell on the repeats only for half the stores (the parity of their start).
    const draws = vi.spyOn(Math, 'random').mockImplementation(seededRandom(0xc1a1));
    const sweeping = new RedisStore({ client, prefix });
    extraStores.push(sweeping);
    const tenant = `twice-${randomUUID()}`;
    const keys = 256;
    try {
      for (let count = 0; count < keys; count++) {
        const ref = newRef(tenant);
        const options = claimOptions({ leaseMs: 1, retentionMs: 1 });
        await sweeping.claim(ref, options);
        await sweeping.claim(ref, options);
      }
    } finally {
      draws.mockRestore();
    }
    await sleep(20);
    const stale = await client.zcount(tenantNames(prefix, tenant).expiry, '-inf', await redisNowMs());
    expect(stale, `stale ${stale}`).toBeLessThan(keys / 2);
  });

  it('converts index entries of the previous layout (the state in the member) when listing; forget erases either kind', async () => {
    const tenant = `legacy-${randomUUID()}`;
    const { index, expiry } = tenantNames(prefix, tenant);
    const letters: Record<string, string> = { in_progress: 'p', completed: 'c', indeterminate: 'i' };
    const refs = Array.from({ length: 250 }, () => newRef(tenant));
    for (const [at, ref] of refs.entries()) {
      const claimed = await acquire(ref);
      if (at % 3 === 1) await store.complete(ref, claimed.holder, '"done"', 60_000);
      if (at % 3 === 2)
        await store.markIndeterminate(ref, claimed.holder, { type: 'T', message: 'm' }, 60_000);
    }
    // Rewrite every entry as the previous layout wrote it: `<state letter><15-digit updatedAtMs><key>`,
    // score 0 in the listing index and the deadline in the expiry index.
    for (const ref of refs) {
      const record = (await store.get(ref))!;
      const member = `${letters[record.state]}${String(record.updatedAtMs).padStart(15, '0')}${ref.key}`;
      await client.zrem(index, ref.key);
      await client.zrem(expiry, `r|${ref.key}`);
      await client.zadd(index, 0, member);
      await client.zadd(expiry, record.expiresAtMs, member);
    }
    // One record moved on after the upgrade: its old entry names another state and is dropped.
    const moved = refs[0]!;
    const held = (await store.get(moved))!;
    await store.complete(moved, { fence: held.fence, owner: held.owner }, '"late"', 60_000);
    // More than one batch of 200: list converts, then answers.
    const listed = await store.list({
      tenant,
      states: ['in_progress', 'completed', 'indeterminate'],
      limit: 500,
    });
    expect(listed.records.map((record) => record.key).sort()).toEqual(refs.map((ref) => ref.key).sort());
    for (const record of listed.records) expect(record.state).toBe((await store.get(record))!.state);
    expect(await client.zcount(index, 0, 0)).toBe(0);
    expect(await client.zcard(index)).toBe(250);
    expect(await client.zcard(expiry)).toBe(251); // and the tenant's name
    expect(await client.zscore(index, moved.key)).toBe(String((await store.get(moved))!.updatedAtMs));
    // forget erases records named by either kind of entry.
    const other = newRef(tenant);
    const otherRecord = await acquire(other);
    await client.zrem(index, other.key);
    await client.zrem(expiry, `r|${other.key}`);
    const otherMember = `p${String(otherRecord.leaseExpiresAtMs - 10_000).padStart(15, '0')}${other.key}`;
    await client.zadd(index, 0, otherMember);
    await client.zadd(expiry, otherRecord.leaseExpiresAtMs + 60_000, otherMember);
    expect(await store.forget({ tenant })).toBe(251);
    expect(await client.exists(index, expiry)).toBe(0);
  });

  it('forgets every record of one tenant across SCAN batches, and only that tenant', async () => {
    const tenant = `forget-${randomUUID()}`;
    const other = `${tenant}-other`;
    const refs = Array.from({ length: 1203 }, () => newRef(tenant));
    // Written through the store, in parallel, to exceed one SCAN/UNLINK batch of 500.
    await Promise.all(refs.map((ref) => store.claim(ref, claimOptions())));
    const kept = [newRef(other), newRef(other)];
    for (const ref of kept) await acquire(ref);
    expect(await store.forget({ tenant })).toBe(1203);
    expect(await store.get(refs[0]!)).toBeNull();
    expect(await store.get(refs[1202]!)).toBeNull();
    for (const ref of kept) expect((await store.get(ref))?.state).toBe('in_progress');
    expect(await store.forget({ tenant })).toBe(0);
    expect(await store.forget({ tenant: other })).toBe(2);
  });

  it('digests tenant names: glob and separator characters match nothing else', async () => {
    const plain = `t${randomUUID()}`;
    const hostile = [`${plain}*`, '*', '?', '[a-z]*', `${plain}:x`, '{tag}', 'a}b{', '\\', 'ünï ✓ 🚀'];
    await acquire(newRef(plain));
    for (const tenant of hostile) {
      const ref = newRef(tenant);
      await acquire(ref);
      expect(store.namesOf(ref).key).toMatch(new RegExp(`^${prefix}:v2:r:\\{[0-9a-f]{32}\\}:[0-9a-f]{64}$`));
    }
    for (const tenant of hostile) expect(await store.forget({ tenant })).toBe(1);
    expect(await store.forget({ tenant: plain })).toBe(1);
  });

  it('escapes keys that are not hex, so a key cannot move the hash tag or match a pattern', async () => {
    const ref = { tenant: 'acme', key: 'refund:A-100}{*' };
    const names = store.namesOf(ref);
    expect(names.key).toMatch(/^[^*]*:v2:r:\{[0-9a-f]{32}\}:refund%3AA-100%7D%7B%2A$/);
    expect(names.channel).toBe(names.key.replace(':r:{', ':s:{'));
    const claimed = await acquire(ref);
    expect(await store.complete(ref, claimed.holder, 'ok', 60_000)).toEqual({ status: 'completed' });
    expect((await store.get(ref))?.key).toBe(ref.key);
  });
});

describe('outcomes', () => {
  it('round-trips a 1 MB non-ASCII outcome byte for byte', async () => {
    const unit = 'é漢字🚀\u0000\n"\\ \u{10FFFF}';
    const outcome = JSON.stringify({ text: unit.repeat(Math.ceil((1024 * 1024) / unit.length)) });
    expect(Buffer.byteLength(outcome, 'utf8')).toBeGreaterThan(1024 * 1024);
    const ref = newRef();
    const claimed = await acquire(ref);
    expect(await store.complete(ref, claimed.holder, outcome, 60_000)).toEqual({ status: 'completed' });
    const replay = await store.claim(ref, claimOptions());
    expect(replay.status).toBe('completed');
    const stored = replay.status === 'completed' ? replay.record.outcome! : '';
    expect(stored.length).toBe(outcome.length);
    expect(createHash('sha256').update(stored).digest('hex')).toBe(
      createHash('sha256').update(outcome).digest('hex'),
    );
    expect(stored === outcome).toBe(true);
  });

  it('keeps an empty outcome distinct from no outcome', async () => {
    const ref = newRef();
    const claimed = await acquire(ref);
    await store.complete(ref, claimed.holder, '', 60_000);
    const record = await store.get(ref);
    expect(record?.state).toBe('completed');
    expect(record?.outcome).toBe('');
  });

  it('refuses an outcome with a lone surrogate rather than storing a different string', async () => {
    const ref = newRef();
    const claimed = await acquire(ref);
    await expect(store.complete(ref, claimed.holder, 'broken \ud800 pair', 60_000)).rejects.toThrow(
      StoreInputError,
    );
    expect((await store.get(ref))?.state).toBe('in_progress');
  });
});

describe('round trips, record size, script registration', () => {
  for (const path of ['auto', 'script'] as const) {
    it(`costs 2 round trips for a first call (after one INFO per store), 1 for a repeat, ${path === 'auto' ? 2 : 1} for a takeover (fresh connection, claim: '${path}')`, async () => {
      const counted = await newClient();
      const counting = newStore(counted, { claim: path });
      const counter = countCommands(counted);
      try {
        const ref = newRef();
        const claimed = await acquire(ref, {}, counting);
        await counting.complete(ref, claimed.holder, 'outcome', 60_000);
        const firstCall = [...counter.names];
        counter.reset();
        const second = newRef();
        await counting.complete(second, (await acquire(second, {}, counting)).holder, 'outcome', 60_000);
        const secondFirstCall = [...counter.names];
        counter.reset();
        expect((await counting.claim(ref, claimOptions())).status).toBe('completed');
        const repeat = [...counter.names];
        counter.reset();
        const expired = newRef();
        await acquire(expired, { leaseMs: 30 }, counting);
        await sleep(60);
        counter.reset();
        const takeover = await counting.claim(expired, claimOptions());
        expect(takeover.status).toBe('acquired');
        const takeoverCommands = [...counter.names];
        // The store's first write is preceded, once per store, by its eviction-policy check. A
        // native claim is SET ... NX GET with PEXPIRETIME in the same write (one round trip); a
        // record it finds in progress goes to the claim script (a second).
        expect({ firstCall, secondFirstCall, repeat, takeover: takeoverCommands }).toEqual(
          path === 'auto'
            ? {
                firstCall: ['info', 'set', 'pexpiretime', 'evalsha'],
                secondFirstCall: ['set', 'pexpiretime', 'evalsha'],
                repeat: ['set', 'pexpiretime'],
                takeover: ['set', 'pexpiretime', 'evalsha'],
              }
            : {
                firstCall: ['info', 'evalsha', 'evalsha'],
                secondFirstCall: ['evalsha', 'evalsha'],
                repeat: ['evalsha'],
                takeover: ['evalsha'],
              },
        );
      } finally {
        counter.restore();
      }
    });
  }

  it('sends the commands of one tick in one socket write (the store corks the socket for the tick)', async () => {
    const corked = await newClient();
    const corking = newStore(corked);
    await corking.get(newRef());
    // Count the socket's writes: _write for one buffer, _writev for several at once.
    type WriteMethod = (...args: unknown[]) => unknown;
    const socket = corked.stream as unknown as Record<'_write' | '_writev', WriteMethod>;
    const writes = { single: 0, vectored: 0 };
    const original = { single: socket._write, vectored: socket._writev };
    socket._write = function (this: unknown, ...args: unknown[]) {
      writes.single++;
      return original.single.apply(this, args);
    };
    socket._writev = function (this: unknown, ...args: unknown[]) {
      writes.vectored++;
      return original.vectored.apply(this, args);
    };
    try {
      const refs = Array.from({ length: 20 }, () => newRef());
      const records = await Promise.all(refs.map((ref) => corking.get(ref)));
      expect(records).toEqual(refs.map(() => null));
      expect(writes).toEqual({ single: 0, vectored: 1 });
    } finally {
      socket._write = original.single;
      socket._writev = original.vectored;
    }
  });

  it('stores a record as one MessagePack string, smaller than a hash, or a small hash + outcome key', async () => {
    const ref = newRef();
    const claimed = await acquire(ref);
    const outcome = `{"seat":"${'x'.repeat(89)}"}`;
    expect(Buffer.byteLength(outcome)).toBe(100);
    await store.complete(ref, claimed.holder, outcome, 60_000);
    const key = store.namesOf(ref).key;
    expect(await client.type(key)).toBe('string');
    const record = (await store.get(ref))!;
    // Same key length as the record's, same hash tag.
    const tag = key.slice(key.indexOf('{'));
    const hashKey = `${prefix}:h:${tag}`;
    const fields = {
      s: record.state,
      f: record.fence,
      a: record.attempt,
      o: record.owner,
      l: record.leaseExpiresAtMs,
      x: record.expiresAtMs,
      r: 60_000,
      t: record.tool,
      p: record.fingerprint,
    };
    // A 100-byte value is over hash-max-listpack-value (64): the whole hash becomes a hashtable.
    await client.hset(hashKey, { ...fields, v: outcome });
    // The outcome in its own string key beside a small (listpack) hash.
    const smallHashKey = `${prefix}:m:${tag}`;
    const outcomeKey = `${prefix}:o:${tag}`;
    await client.hset(smallHashKey, fields);
    await client.set(outcomeKey, outcome);
    for (const each of [key, hashKey, smallHashKey, outcomeKey]) await client.pexpire(each, 60_000);
    const usage = async (name: string) => Number(await client.memory('USAGE', name, 'SAMPLES', '0'));
    const stringBytes = await usage(key);
    const hashBytes = await usage(hashKey);
    const splitBytes = (await usage(smallHashKey)) + (await usage(outcomeKey));
    expect(await client.object('ENCODING', smallHashKey)).toBe('listpack');
    await client.unlink(hashKey, smallHashKey, outcomeKey);
    console.info(
      `MEMORY USAGE, record with a 100-byte outcome: string ${stringBytes} B, hash ${hashBytes} B, ` +
        `listpack hash + outcome string ${splitBytes} B`,
    );
    expect(stringBytes).toBeLessThan(hashBytes);
    expect(stringBytes).toBeLessThan(splitBytes);
  });

  it('registers each script as a command named with the package version', async () => {
    const { version } = (await import('../package.json', { with: { type: 'json' } })).default;
    const suffix = version.replace(/[^0-9A-Za-z]/g, '_');
    for (const name of ['claim', 'renew', 'complete', 'release', 'mark_indeterminate', 'resolve', 'get']) {
      expect(typeof (client as unknown as Record<string, unknown>)[`toolfence_${suffix}_${name}`]).toBe(
        'function',
      );
    }
    await store.get(newRef());
    const sha = createHash('sha1').update(scripts.get.lua).digest('hex');
    expect(await client.script('EXISTS', sha)).toEqual([1]);
    for (const script of Object.values(scripts)) {
      expect(script.lua).not.toMatch(/^--- @include/m);
      expect(script.lua).not.toMatch(/\bSCAN\b|\bKEYS\b\s*\(/);
    }
  });
});

describe('waitForSettle', () => {
  async function timed<T>(work: Promise<T>): Promise<{ value: T; elapsedMs: number }> {
    const started = performance.now();
    const value = await work;
    return { value, elapsedMs: performance.now() - started };
  }

  /**
   * Starts a wait on the in-progress record `ref` and returns it once the waiter has subscribed
   * and marked the record waited (watch-1.lua: the mark, after the SUBSCRIBE, is the only write,
   * so the stored bytes change): a settle from now on is published to it. Polls with a deadline;
   * a fixed sleep is outrun by a loaded machine.
   */
  async function watched<T>(ref: RecordRef, wait: () => Promise<T>): Promise<{ waiting: Promise<T> }> {
    const key = store.namesOf(ref).key;
    const unmarked = await client.getBuffer(key);
    if (unmarked === null) throw new Error('watched: the record should exist');
    const waiting = wait();
    await waitFor(
      () => client.getBuffer(key),
      (now) => now === null || !now.equals(unmarked),
      { message: 'the waiter to mark the record' },
    );
    return { waiting };
  }

  it('is woken by the publish of complete, well before the first poll', async () => {
    const ref = newRef();
    const claimed = await acquire(ref);
    const { waiting } = await watched(ref, () => store.waitForSettle(ref, { timeoutMs: 10_000 }));
    // From the complete: the first poll re-reads 250 ms after the wait began.
    const { value, elapsedMs } = await timed(
      store.complete(ref, claimed.holder, 'done', 60_000).then(() => waiting),
    );
    expect(value).toBe('settled');
    expect(elapsedMs).toBeLessThan(200);
  });

  it('is woken by release, by markIndeterminate and by a claim that marks an expired lease', async () => {
    const released = newRef();
    const a = await acquire(released);
    const { waiting: waitRelease } = await watched(released, () =>
      store.waitForSettle(released, { timeoutMs: 10_000 }),
    );
    await store.release(released, a.holder);
    expect(await waitRelease).toBe('settled');

    const marked = newRef();
    const b = await acquire(marked);
    const { waiting: waitMarked } = await watched(marked, () =>
      store.waitForSettle(marked, { timeoutMs: 10_000 }),
    );
    await store.markIndeterminate(marked, b.holder, { type: 'E', message: 'm' }, 60_000);
    expect(await waitMarked).toBe('settled');
  });

  it('publishes a settlement only when a waiter marked the record (issue 22)', async () => {
    type Holder = { fence: number; owner: string };
    const settlements: [string, (ref: RecordRef, holder: Holder) => Promise<unknown>][] = [
      ['completed', (ref, holder) => store.complete(ref, holder, 'ok', 60_000)],
      ['released', (ref, holder) => store.release(ref, holder)],
      [
        'indeterminate',
        (ref, holder) => store.markIndeterminate(ref, holder, { type: 'E', message: 'm' }, 60_000),
      ],
    ];
    const listener = await newClient();
    const heard: string[] = [];
    listener.on('message', (_channel: string, message: string) => heard.push(message));
    const claimListened = async (ref: RecordRef, leaseMs = 10_000) => {
      const claimed = await acquire(ref, { leaseMs, mode: 'at-most-once' });
      await listener.subscribe(store.namesOf(ref).channel);
      return claimed.holder;
    };
    // No waiter: nothing is published. A marker published after the settles (on a channel the
    // listener has) arrives after anything they published: the server delivers in order.
    let lastChannel = '';
    for (const [, settle] of settlements) {
      const ref = newRef();
      await settle(ref, await claimListened(ref));
      lastChannel = store.namesOf(ref).channel;
    }
    await client.publish(lastChannel, 'marker');
    await waitFor(
      () => heard.length,
      (count) => count > 0,
      { message: 'the marker message' },
    );
    expect(heard).toEqual(['marker']);
    heard.length = 0;
    // A waiter marks the record; the mark changes neither its fields nor its expiry.
    const markedBy = async (ref: RecordRef) => {
      const before = await store.get(ref);
      const pttl = await client.pttl(store.namesOf(ref).key);
      const { waiting } = await watched(ref, () => store.waitForSettle(ref, { timeoutMs: 10_000 }));
      expect(await store.get(ref)).toEqual(before);
      const kept = await client.pttl(store.namesOf(ref).key);
      expect(kept).toBeGreaterThan(pttl - 100);
      expect(kept).toBeLessThanOrEqual(pttl);
      return { waiting };
    };
    for (const [state, settle] of settlements) {
      const ref = newRef();
      const holder = await claimListened(ref);
      const { waiting } = await markedBy(ref);
      await settle(ref, holder);
      expect(await waiting).toBe('settled');
      await waitFor(
        () => heard.at(-1),
        (last) => last === state,
        { message: `the ${state} notification` },
      );
    }
    // ... and a claim that finds the lease expired and marks the record indeterminate.
    const expired = newRef();
    await claimListened(expired, 200);
    expect(await (await markedBy(expired)).waiting).toBe('lease_expired');
    expect((await store.claim(expired, claimOptions({ mode: 'at-most-once' }))).status).toBe('indeterminate');
    await waitForValue(() => heard, ['completed', 'released', 'indeterminate', 'indeterminate']);
  });

  it('wakes at the lease deadline with lease_expired', async () => {
    const ref = newRef();
    await acquire(ref, { leaseMs: 400 });
    const { value, elapsedMs } = await timed(store.waitForSettle(ref, { timeoutMs: 10_000 }));
    expect(value).toBe('lease_expired');
    expect(elapsedMs).toBeGreaterThan(300);
    // Well before the 10 s timeout: it woke for the lease (a loaded machine's timers run late).
    expect(elapsedMs).toBeLessThan(5_000);
  });

  it('keeps waiting through a renewal and wakes at the renewed deadline', async () => {
    const ref = newRef();
    // A lease long enough that the renewal lands inside it on a loaded machine.
    const claimed = await acquire(ref, { leaseMs: 1_000 });
    // The waiter has read the first lease (and armed its re-read at that deadline) before the renewal.
    const { waiting } = await watched(ref, () => store.waitForSettle(ref, { timeoutMs: 10_000 }));
    const { value, elapsedMs } = await timed(
      store.renew(ref, claimed.holder, 1_500).then((renewed) => {
        expect(renewed).toMatchObject({ status: 'renewed' });
        return waiting;
      }),
    );
    expect(value).toBe('lease_expired');
    // The renewed lease ends 1 500 ms after Redis ran the renew, which is after it was sent
    // (-5: deadlines are whole ms on the Redis clock, this clock may round the other way).
    expect(elapsedMs).toBeGreaterThanOrEqual(1_495);
  });

  it('answers settled at once for a settled or missing record, timeout otherwise', async () => {
    const ref = newRef();
    const claimed = await acquire(ref);
    expect(await store.waitForSettle(ref, { timeoutMs: 50 })).toBe('timeout');
    await store.complete(ref, claimed.holder, 'x', 60_000);
    expect(await store.waitForSettle(ref, { timeoutMs: 0 })).toBe('settled');
    expect(await store.waitForSettle(newRef(), { timeoutMs: 0 })).toBe('settled');
  });

  it('falls back to polling when no message comes (record deleted behind its back)', async () => {
    const ref = newRef();
    await acquire(ref);
    // Deleted after the waiter's first read found it in progress: only a poll can tell.
    const { waiting } = await watched(ref, () => timed(store.waitForSettle(ref, { timeoutMs: 10_000 })));
    await client.unlink(store.namesOf(ref).key);
    const { value, elapsedMs } = await waiting;
    expect(value).toBe('settled');
    expect(elapsedMs).toBeGreaterThan(200);
    expect(elapsedMs).toBeLessThan(3_000);
  });

  it('rejects with the abort reason when aborted', async () => {
    const ref = newRef();
    await acquire(ref);
    const controller = new AbortController();
    const waiting = store.waitForSettle(ref, { timeoutMs: 10_000, signal: controller.signal });
    controller.abort(new Error('caller gave up'));
    await expect(waiting).rejects.toThrow('caller gave up');
  });

  it('serves 100 waiters through one extra connection, and close() ends only that one', async () => {
    const connectionName = `tf-sub-${randomBytes(4).toString('hex')}`;
    const own = await connectRedis({ connectionName });
    extraClients.push(own);
    const shared = new RedisStore({ client: own, prefix });
    const countConnections = async () =>
      String(await client.client('LIST'))
        .split('\n')
        .filter((line) => line.includes(` name=${connectionName} `)).length;
    expect(await countConnections()).toBe(1);
    const refs = Array.from({ length: 50 }, () => newRef());
    const holders = await Promise.all(refs.map((ref) => acquire(ref, {}, shared)));
    // 100 waiters: two on each of 50 keys.
    const waits = refs.flatMap((ref) => [
      shared.waitForSettle(ref, { timeoutMs: 10_000 }),
      shared.waitForSettle(ref, { timeoutMs: 10_000 }),
    ]);
    const channel = shared.namesOf(refs[0]!).channel;
    await waitForValue(() => client.pubsub('NUMSUB', channel), [channel, 1]);
    // The subscriber is a duplicate() of `own`, so it carries the same name.
    expect(await countConnections()).toBe(2);
    await Promise.all(refs.map((ref, index) => shared.complete(ref, holders[index]!.holder, 'ok', 60_000)));
    expect(await Promise.all(waits)).toEqual(Array.from({ length: 100 }, () => 'settled'));
    await waitForValue(() => client.pubsub('NUMSUB', channel), [channel, 0]);

    const pending = newRef();
    await acquire(pending, {}, shared);
    const orphan = shared.waitForSettle(pending, { timeoutMs: 10_000 });
    await waitForValue(
      () => client.pubsub('NUMSUB', shared.namesOf(pending).channel),
      [shared.namesOf(pending).channel, 1],
    );
    await shared.close();
    await expect(orphan).rejects.toSatisfy(StoreUnavailableError.isInstance);
    // The server drops the subscriber's entry in CLIENT LIST only after it reads the close.
    await waitForValue(countConnections, 1, { message: `one connection named ${connectionName}` });
    expect(own.status).toBe('ready');
    expect(await own.ping()).toBe('PONG');
    await expect(shared.claim(newRef(), claimOptions())).rejects.toSatisfy(StoreUnavailableError.isInstance);
  });
});

describe('an unavailable Redis', () => {
  it('throws StoreUnavailableError quickly once the server is gone, for every operation', async () => {
    const server = await startRedisServer();
    const doomed = new Redis({ port: server.port, host: '127.0.0.1' });
    doomed.on('error', () => {});
    extraClients.push(doomed);
    const down = new RedisStore({ client: doomed, prefix });
    extraStores.push(down);
    const ref = newRef();
    const claimed = await acquire(ref, {}, down);
    await server.stop();
    // The client has seen its connection close (ioredis leaves 'ready' then): the operations
    // below meet a server that is gone, not one still closing.
    await waitFor(
      () => doomed.status,
      (status) => status !== 'ready',
      { message: 'the client to see the server gone' },
    );
    const started = performance.now();
    const operations: [string, () => Promise<unknown>][] = [
      ['claim', () => down.claim(newRef(), claimOptions())],
      ['renew', () => down.renew(ref, claimed.holder, 1000)],
      ['complete', () => down.complete(ref, claimed.holder, 'x', 1000)],
      ['release', () => down.release(ref, claimed.holder)],
      [
        'markIndeterminate',
        () => down.markIndeterminate(ref, claimed.holder, { type: 'E', message: 'm' }, 1000),
      ],
      ['get', () => down.get(ref)],
      ['resolve', () => down.resolve(ref, { released: true }, 1000)],
      ['forget', () => down.forget({ tenant: 'acme' })],
      ['waitForSettle', () => down.waitForSettle(ref, { timeoutMs: 10_000 })],
    ];
    for (const [operation, run] of operations) {
      const error = await run().then(
        () => new Error(`${operation} succeeded against a stopped Redis`),
        (caught: unknown) => caught,
      );
      expect(StoreUnavailableError.isInstance(error), `${operation}: ${String(error)}`).toBe(true);
      expect((error as StoreUnavailableError).operation).toBe(operation);
    }
    // All nine together in less than one operation deadline (5 s): none waited for its deadline.
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  it('fails a client that never connected (nothing listens) with StoreUnavailableError', async () => {
    const port = await freePort();
    const nowhere = new Redis({ port, host: '127.0.0.1' });
    nowhere.on('error', () => {});
    extraClients.push(nowhere);
    const down = new RedisStore({ client: nowhere, prefix, commandTimeoutMs: 500 });
    extraStores.push(down);
    const started = performance.now();
    await expect(down.claim(newRef(), claimOptions())).rejects.toSatisfy(StoreUnavailableError.isInstance);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('bounds a server that accepts but never answers by operationTimeoutMs (commandTimeoutMs, its former name, still works)', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const hanging = new Redis({ port, host: '127.0.0.1', connectTimeout: 60_000 });
    hanging.on('error', () => {});
    const down = new RedisStore({ client: hanging, prefix, commandTimeoutMs: 300 });
    try {
      const started = performance.now();
      const error = await down.claim(newRef(), claimOptions()).catch((caught: unknown) => caught);
      const elapsedMs = performance.now() - started;
      expect(StoreUnavailableError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(
        new RegExp(`RedisStore at 127\\.0\\.0\\.1:${port}/0: no reply within operationTimeoutMs \\(300 ms`),
      );
      expect(elapsedMs).toBeGreaterThan(250);
      expect(elapsedMs).toBeLessThan(1000);
    } finally {
      await down.close();
      hanging.disconnect();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('options', () => {
  it('refuses a client with keyPrefix and a prefix with braces', () => {
    const prefixed = new Redis(redisUrl, { lazyConnect: true, keyPrefix: 'app:' });
    try {
      expect(() => new RedisStore({ client: prefixed })).toThrow(/keyPrefix/);
    } finally {
      prefixed.disconnect();
    }
    expect(() => new RedisStore({ client, prefix: 'a{b}' })).toThrow(TypeError);
    expect(() => new RedisStore({ client, prefix: '' })).toThrow(TypeError);
    expect(() => new RedisStore({ client, commandTimeoutMs: 0 })).toThrow(RangeError);
  });
});
