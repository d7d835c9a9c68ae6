// RedisStore's native claim (Redis >= 7.0: SET ... NX PX ... GET, no script) against a real Redis
// (REDIS_URL): the record it writes, its deadlines read from the key's expiry, the records of both
// claim paths read by the other, and the listing of records whose holder never came back (no
// script indexed them: list and forget index them first). The script path (Redis 6.2) is forced
// with `claim: 'script'`; both paths also run the conformance suite (conformance.redis.test.ts).
import { randomBytes, randomUUID } from 'node:crypto';
import type { ClaimOptions, RecordRef } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  connectRedis,
  countCommands,
  deletePrefix,
  keysUnder,
  randomPrefix,
  sleep,
} from '../../../test/support/redis.js';
import { tenantNames } from '../src/redis/names.js';
import { lacksNativeCommands, packNativeRecord } from '../src/redis/native-claim.js';
import { unpackSequence } from '../src/redis/record-unpack.js';

const prefix = randomPrefix('native');
let client: Redis;
let native: RedisStore;
let scripted: RedisStore;

beforeAll(async () => {
  client = await connectRedis();
  native = new RedisStore({ client, prefix });
  scripted = new RedisStore({ client, prefix, claim: 'script' });
});

afterAll(async () => {
  await native?.close();
  await scripted?.close();
  if (client !== undefined) {
    await deletePrefix(client, prefix);
    expect(await keysUnder(client, prefix)).toEqual([]);
  }
  client?.disconnect();
});

const newRef = (tenant = `t-${randomUUID()}`): RecordRef => ({
  tenant,
  key: randomBytes(16).toString('hex'),
});

function claimOptions(overrides: Partial<ClaimOptions> = {}): ClaimOptions {
  return {
    tool: 'book_seat',
    fingerprint: 'f'.repeat(64),
    owner: randomUUID(),
    leaseMs: 10_000,
    retentionMs: 60_000,
    mode: 'at-least-once',
    maxAttempts: 3,
    checkFingerprint: true,
    ...overrides,
  };
}

async function redisNowMs(): Promise<number> {
  const [seconds, microseconds] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(microseconds) / 1000);
}

describe('the native claim', () => {
  it('writes the in-progress record with no clock in it: its deadlines are the key expiry', async () => {
    const ref = newRef();
    const options = claimOptions({ runId: 'run-1', codec: 'json' });
    const before = await redisNowMs();
    const claimed = await native.claim(ref, options);
    const after = await redisNowMs();
    if (claimed.status !== 'acquired') throw new Error(`claimed ${claimed.status}`);
    expect(claimed).toMatchObject({ fence: 1, attempt: 1, takeover: false });
    expect(claimed.leaseExpiresAtMs).toBeGreaterThanOrEqual(before + 10_000);
    expect(claimed.leaseExpiresAtMs).toBeLessThanOrEqual(after + 10_000);
    const key = native.namesOf(ref).key;
    const stored = await client.getBuffer(key);
    expect(stored?.equals(packNativeRecord(ref, options))).toBe(true);
    const values = unpackSequence(stored!)!;
    expect(values[0]?.toString()).toBe('in_progress');
    expect([values[4], values[5], values[15], values[16]]).toEqual([null, null, null, null]);
    expect([values[20], values[21]?.toString()]).toEqual([10_000, ref.tenant]);
    expect(await client.pexpiretime(key)).toBe(claimed.leaseExpiresAtMs + 60_000);
    // Read by the scripts, the deadlines come from the expiry, exact.
    expect(await scripted.get(ref)).toMatchObject({
      state: 'in_progress',
      owner: options.owner,
      leaseExpiresAtMs: claimed.leaseExpiresAtMs,
      expiresAtMs: claimed.leaseExpiresAtMs + 60_000,
      claimedAtMs: claimed.leaseExpiresAtMs - 10_000,
      updatedAtMs: claimed.leaseExpiresAtMs - 10_000,
      runId: 'run-1',
      codec: 'json',
      retentionMs: 60_000,
    });
    // No index entry yet: the listing index does not name it until a script writes it.
    expect(await client.zscore(tenantNames(prefix, ref.tenant).index, ref.key)).toBeNull();
  });

  it('answers a repeat, a conflict and a busy key like the claim script, in one native write', async () => {
    const ref = newRef();
    const options = claimOptions();
    const claimed = await native.claim(ref, options);
    if (claimed.status !== 'acquired') throw new Error(`claimed ${claimed.status}`);
    const busyNative = await native.claim(ref, claimOptions());
    const busyScripted = await scripted.claim(ref, claimOptions());
    expect(busyNative).toMatchObject({
      status: 'busy',
      record: { leaseExpiresAtMs: claimed.leaseExpiresAtMs },
    });
    expect(busyScripted).toMatchObject({
      status: 'busy',
      record: { leaseExpiresAtMs: claimed.leaseExpiresAtMs },
    });
    expect(await native.complete(ref, { fence: 1, owner: options.owner }, '"done"', 60_000)).toEqual({
      status: 'completed',
    });
    const counter = countCommands(client);
    try {
      expect(await native.claim(ref, claimOptions())).toMatchObject({
        status: 'completed',
        record: { outcome: '"done"', state: 'completed' },
      });
      expect(await native.claim(ref, claimOptions({ fingerprint: 'e'.repeat(64) }))).toMatchObject({
        status: 'conflict',
      });
      expect(counter.names).toEqual(['set', 'pexpiretime', 'set', 'pexpiretime']);
    } finally {
      counter.restore();
    }
  });

  it('resends of its own claim and takeovers go through the claim script, judged by the Redis clock', async () => {
    const ref = newRef();
    const options = claimOptions({ leaseMs: 40 });
    const first = await native.claim(ref, options);
    expect(first).toMatchObject({ status: 'acquired', fence: 1 });
    // The same claim again (ioredis resends a command whose reply was lost): acquired, same fence.
    expect(await native.claim(ref, options)).toMatchObject({ status: 'acquired', fence: 1, takeover: false });
    await sleep(80);
    const takeover = await native.claim(ref, claimOptions());
    expect(takeover).toMatchObject({ status: 'acquired', fence: 2, attempt: 2, takeover: true });
    // The takeover wrote the record with its deadlines and its index entry.
    expect(await client.zscore(tenantNames(prefix, ref.tenant).index, ref.key)).not.toBeNull();
    const atMostOnce = newRef();
    await native.claim(atMostOnce, claimOptions({ leaseMs: 30 }));
    await sleep(60);
    expect(await native.claim(atMostOnce, claimOptions({ mode: 'at-most-once' }))).toMatchObject({
      status: 'indeterminate',
    });
  });

  it('reads records of the claim script, and the claim script reads its records (one prefix, both paths)', async () => {
    const ref = newRef();
    const options = claimOptions();
    expect(await scripted.claim(ref, options)).toMatchObject({ status: 'acquired', fence: 1 });
    expect(await native.claim(ref, claimOptions())).toMatchObject({ status: 'busy' });
    await scripted.complete(ref, { fence: 1, owner: options.owner }, '"s"', 60_000);
    expect(await native.claim(ref, claimOptions())).toMatchObject({
      status: 'completed',
      record: { outcome: '"s"' },
    });
    const other = newRef();
    const held = claimOptions();
    await native.claim(other, held);
    expect(await scripted.renew(other, { fence: 1, owner: held.owner }, 5_000)).toMatchObject({
      status: 'renewed',
    });
    await native.complete(other, { fence: 1, owner: held.owner }, '"n"', 60_000);
    expect(await scripted.claim(other, claimOptions())).toMatchObject({
      status: 'completed',
      record: { outcome: '"n"' },
    });
  });

  it('a waiter marks a native record without giving it deadlines of its own (the key keeps its expiry)', async () => {
    const ref = newRef();
    const options = claimOptions();
    const claimed = await native.claim(ref, options);
    if (claimed.status !== 'acquired') throw new Error(`claimed ${claimed.status}`);
    const waiting = native.waitForSettle(ref, { timeoutMs: 5_000 });
    await sleep(50);
    expect(await native.get(ref)).toMatchObject({ leaseExpiresAtMs: claimed.leaseExpiresAtMs });
    await native.complete(ref, { fence: 1, owner: options.owner }, '"woken"', 60_000);
    expect(await waiting).toBe('settled');
  });

  it('sweeps on a complete drawn 1 in 16 (no claim script runs for a new record)', async () => {
    const tenant = `sweep-${randomUUID()}`;
    const { index } = tenantNames(prefix, tenant);
    const refs = Array.from({ length: 20 }, () => newRef(tenant));
    // No complete sweeps while they are written (>= 1/16), then the one after them does (< 1/16).
    const draws = vi.spyOn(Math, 'random').mockReturnValue(0.5);
    try {
      for (const ref of refs) {
        const options = claimOptions();
        await native.claim(ref, options);
        await native.complete(ref, { fence: 1, owner: options.owner }, 'x', 50);
      }
      expect(await client.zcard(index)).toBe(20);
      await sleep(100);
      draws.mockReturnValue(0.01);
      const ref = newRef(tenant);
      const options = claimOptions();
      await native.claim(ref, options);
      await native.complete(ref, { fence: 1, owner: options.owner }, 'x', 60_000);
    } finally {
      draws.mockRestore();
    }
    expect(await client.zcard(index)).toBe(1);
  });

  it('names lacking native commands from the replies of Redis 6.2 only', () => {
    const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });
    expect(lacksNativeCommands(reply('ERR syntax error'))).toBe(true);
    expect(lacksNativeCommands(reply("ERR unknown command 'pexpiretime', with args beginning with: "))).toBe(
      true,
    );
    expect(
      lacksNativeCommands(reply('WRONGTYPE Operation against a key holding the wrong kind of value')),
    ).toBe(false);
    expect(lacksNativeCommands(new Error('ERR syntax error'))).toBe(false);
  });
});

describe('records no script touched (a holder killed after its native claim)', () => {
  it('are listed as in progress and lease_expired (one tenant, every tenant) and erased by forget', async () => {
    const tenant = `killed-${randomUUID()}`;
    const live = newRef(tenant);
    const lapsed = newRef(tenant);
    await native.claim(live, claimOptions());
    await native.claim(lapsed, claimOptions({ leaseMs: 20 }));
    await sleep(50);
    const inProgress = await scripted.list({ tenant, states: ['in_progress'], limit: 10 });
    expect(inProgress.records.map((record) => record.key).sort()).toEqual([live.key, lapsed.key].sort());
    const expired = await native.list({ tenant, states: ['lease_expired'], limit: 10 });
    expect(expired.records.map((record) => [record.key, record.state])).toEqual([
      [lapsed.key, 'in_progress'],
    ]);
    const other = newRef(`killed-other-${randomUUID()}`);
    await native.claim(other, claimOptions({ leaseMs: 20 }));
    await sleep(50);
    const everyTenant = await native.list({ allTenants: true, states: ['lease_expired'], limit: 1000 });
    expect(everyTenant.records.map((record) => record.key)).toEqual(
      expect.arrayContaining([lapsed.key, other.key]),
    );
    // forget indexes them first, so it erases them with the rest of the tenant.
    const gone = newRef(tenant);
    await native.claim(gone, claimOptions());
    expect(await native.forget({ tenant })).toBe(3);
    expect(await native.get(gone)).toBeNull();
    expect(await native.get(live)).toBeNull();
    expect(await native.forget({ tenant: other.tenant })).toBe(1);
  });
});
