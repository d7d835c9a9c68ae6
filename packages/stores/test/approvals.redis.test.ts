// RedisStore's approvals against a real Redis (REDIS_URL), beyond the conformance cases: the claim
// that needs an approval never goes native (a SET NX finding nothing would run the call
// unapproved), a native claim that finds an approval hands it to the claim script, and clients of
// both claim paths, each on its own connection, racing to use one approval: exactly one acquires.
import { randomBytes, randomUUID } from 'node:crypto';
import type { ClaimOptions, RecordRef } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectRedis,
  countCommands,
  deletePrefix,
  keysUnder,
  randomPrefix,
} from '../../../test/support/redis.js';

const prefix = randomPrefix('approvals');
const clients: Redis[] = [];
const stores: RedisStore[] = [];
let client: Redis;
let native: RedisStore;

async function newStore(claim: 'auto' | 'script'): Promise<RedisStore> {
  const connection = await connectRedis();
  clients.push(connection);
  const store = new RedisStore({ client: connection, prefix, claim });
  stores.push(store);
  return store;
}

beforeAll(async () => {
  client = await connectRedis();
  clients.push(client);
  native = new RedisStore({ client, prefix });
  stores.push(native);
  // The first native claim tells the store the server has the native commands.
  await native.claim(newRef(), claimOptions());
});

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  if (client !== undefined) {
    await deletePrefix(client, prefix);
    expect(await keysUnder(client, prefix)).toEqual([]);
  }
  for (const connection of clients) connection.disconnect();
});

function newRef(): RecordRef {
  return { tenant: `t-${randomUUID()}`, key: randomBytes(16).toString('hex') };
}

function claimOptions(overrides: Partial<ClaimOptions> = {}): ClaimOptions {
  return {
    tool: 'send_payment',
    fingerprint: 'a'.repeat(64),
    owner: randomUUID(),
    leaseMs: 10_000,
    retentionMs: 60_000,
    mode: 'at-most-once',
    maxAttempts: 1,
    checkFingerprint: true,
    ...overrides,
  };
}

const decision = { tool: 'send_payment', fingerprint: 'a'.repeat(64), by: 'ops@example.com' };

describe('RedisStore approvals', () => {
  it('sends a claim that needs an approval to the claim script, never SET NX', async () => {
    const ref = newRef();
    const commands = countCommands(client);
    try {
      const asked = await native.claim(ref, claimOptions({ approval: 'required' }));
      expect(asked.status).toBe('approval_required');
      expect(commands.names).not.toContain('set');
      expect(commands.names.some((name) => name === 'evalsha' || name === 'eval')).toBe(true);
    } finally {
      commands.restore();
    }
    const record = await native.get(ref);
    expect(record).toMatchObject({ state: 'awaiting_approval', fence: 0, attempt: 0, leaseExpiresAtMs: 0 });
  });

  it('a native claim without the requirement hands an approval to the script, which consumes it', async () => {
    const ref = newRef();
    expect((await native.decideApproval(ref, { ...decision, approved: true }, 60_000)).status).toBe(
      'decided',
    );
    const commands = countCommands(client);
    let claimed: Awaited<ReturnType<RedisStore['claim']>>;
    try {
      claimed = await native.claim(ref, claimOptions());
      // The native SET NX GET found the approval (nothing written), then the script decided.
      expect(commands.names.filter((name) => name === 'set')).toHaveLength(1);
      expect(commands.names.some((name) => name === 'evalsha' || name === 'eval')).toBe(true);
    } finally {
      commands.restore();
    }
    expect(claimed).toMatchObject({ status: 'acquired', fence: 1, attempt: 1, takeover: false });
    const record = await native.get(ref);
    expect(record).toMatchObject({
      state: 'in_progress',
      fence: 1,
      approval: { approved: true, by: 'ops@example.com' },
    });
    // The approval entry survives the complete and is read back by a native repeat (client-judged).
    if (claimed.status !== 'acquired') throw new Error('not acquired');
    const holder = { fence: claimed.fence, owner: record!.owner };
    expect((await native.complete(ref, holder, 'paid', 60_000)).status).toBe('completed');
    const repeat = await native.claim(ref, claimOptions());
    expect(repeat).toMatchObject({
      status: 'completed',
      record: { outcome: 'paid', approval: { approved: true, by: 'ops@example.com' } },
    });
  });

  it('a denial is answered by the native claim as found, nothing written', async () => {
    const ref = newRef();
    await native.decideApproval(ref, { ...decision, approved: false, reason: 'not this one' }, 60_000);
    const before = await client.getBuffer(native.namesOf(ref).key);
    const answer = await native.claim(ref, claimOptions());
    expect(answer).toMatchObject({
      status: 'denied',
      record: { state: 'denied', approval: { approved: false, reason: 'not this one' } },
    });
    expect(await client.getBuffer(native.namesOf(ref).key)).toEqual(before);
  });

  it('16 clients of both claim paths racing to use one approval: exactly one acquires', async () => {
    const racers = await Promise.all(
      Array.from({ length: 16 }, (_, index) => newStore(index % 2 === 0 ? 'auto' : 'script')),
    );
    for (let round = 0; round < 5; round++) {
      const ref = newRef();
      await native.decideApproval(ref, { ...decision, approved: true }, 60_000);
      const answers = await Promise.all(
        racers.map((store, index) =>
          store.claim(ref, claimOptions(index % 4 < 2 ? { approval: 'required' } : {})),
        ),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses.filter((status) => status === 'acquired')).toHaveLength(1);
      expect(statuses.filter((status) => status === 'busy')).toHaveLength(15);
      expect(await native.get(ref)).toMatchObject({ state: 'in_progress', fence: 1, attempt: 1 });
    }
  });

  it('a denial racing claims: acquired only if the claim came first, and then the denial is consumed', async () => {
    const racers = await Promise.all(
      Array.from({ length: 8 }, (_, index) => newStore(index % 2 ? 'auto' : 'script')),
    );
    for (let round = 0; round < 5; round++) {
      const ref = newRef();
      await native.decideApproval(ref, { ...decision, approved: true }, 60_000);
      const [denial, ...answers] = await Promise.all([
        native.decideApproval(ref, { ...decision, approved: false }, 60_000),
        ...racers.map((store) => store.claim(ref, claimOptions({ approval: 'required' }))),
      ]);
      const acquired = answers.filter((answer) => answer.status === 'acquired');
      const record = await native.get(ref);
      if (denial.status === 'decided') {
        // The denial came before every claim: none ran, and every claim saw the denial.
        expect(acquired).toHaveLength(0);
        expect(answers.every((answer) => answer.status === 'denied')).toBe(true);
        expect(record).toMatchObject({ state: 'denied' });
      } else {
        expect(denial.status).toBe('consumed');
        expect(acquired).toHaveLength(1);
        expect(record).toMatchObject({ state: 'in_progress', fence: 1, approval: { approved: true } });
      }
    }
  });
});
