// `toolfence resolve/release --fence N --owner ID` as a real process, against the shared Redis and
// PostgreSQL: the record is re-lived between the operator's `inspect` and the decision (another
// operator releases it, the call runs again and times out again: a new life at fence 1 with
// another owner), and the decision meant for the old call is refused (exit 1), the new record
// untouched.
import {
  Guard,
  Idempotency,
  type IdempotencyPolicy,
  type IdempotencyRecord,
  type IdempotencyStore,
} from '@toolfence/core';
import { PostgresStore } from '@toolfence/stores/postgres';
import { RedisStore } from '@toolfence/stores/redis';
import { expect, it } from 'vitest';
import {
  createPool,
  databaseUrl,
  dropSchema,
  requirePostgres,
  uniqueSchemaName,
} from '../../../test/support/postgres.js';
import { connectRedis, deletePrefix, randomPrefix, redisUrl } from '../../../test/support/redis.js';
import { runCli } from '../../../test/support/run-cli.js';

const DAY_MS = 86_400_000;
const policy: IdempotencyPolicy = { kind: Idempotency.EFFECTFUL };

async function reLivedScenario(store: IdempotencyStore, storeArgs: readonly string[]): Promise<void> {
  const tenant = `acme-${Math.random().toString(16).slice(2, 10)}`;
  const guard = new Guard({ store, tenant });
  const cli = (args: readonly string[]) => runCli([...storeArgs, '--tenant', tenant, ...args]);
  const timesOut = () =>
    guard
      .run({ tool: 'refund', arguments: { orderId: 'A-1' }, runId: 'run-1', policy }, () =>
        Promise.reject(new Error('gateway timeout')),
      )
      .then(
        () => expect.unreachable('should be indeterminate'),
        (error: { key: string }) => error.key,
      );
  const key = await timesOut();
  const ref = { tenant, key };

  const inspected = await cli(['inspect', key, '--json']);
  expect(inspected.code, inspected.stderr).toBe(0);
  const seen = inspected.json[0]?.record as IdempotencyRecord;
  expect(seen).toMatchObject({ state: 'indeterminate', fence: 1 });
  const readable = await cli(['inspect', key]);
  expect(readable.stdout).toContain(`holder    --fence 1 --owner ${seen.owner}`);

  // Meanwhile: another operator releases it, and the call runs again and times out again.
  expect(await store.resolve(ref, { released: true, by: 'bo' }, DAY_MS)).toEqual({ status: 'resolved' });
  expect(await timesOut()).toBe(key);
  const now = (await store.get(ref)) as IdempotencyRecord;
  expect(now).toMatchObject({ state: 'indeterminate', fence: 1 });
  expect(now.owner).not.toBe(seen.owner);

  const holderArgs = ['--fence', String(seen.fence), '--owner', seen.owner];
  for (const args of [
    ['resolve', key, '--outcome', '{"refundId":"r-old"}', ...holderArgs],
    ['release', key, ...holderArgs],
  ]) {
    const refused = await cli(args);
    expect(refused.code, `${args[0]}: ${refused.stderr}`).toBe(1);
    expect(refused.stderr).toContain('the record changed since you inspected it, nothing was settled');
    expect(refused.stderr).toContain(`--fence 1 --owner ${now.owner}`);
    expect(await store.get(ref)).toEqual(now);
  }
  const json = await cli(['release', key, ...holderArgs, '--json']);
  expect(json.code).toBe(1);
  expect(json.json[0]).toMatchObject({ status: 'changed', record: { owner: now.owner, fence: 1 } });
  expect(await guard.resolutions(key)).toHaveLength(1); // bo's release only

  for (const bad of [
    ['--fence', '1'],
    ['--owner', seen.owner],
    ['--fence', 'one', '--owner', 'o'],
  ]) {
    const usage = await cli(['release', key, ...bad]);
    expect(usage.code, `${bad.join(' ')}: ${usage.stderr}`).toBe(2);
  }
  expect(await store.get(ref)).toEqual(now);

  const settled = await cli([
    'resolve',
    key,
    '--outcome',
    '{"refundId":"r-new"}',
    '--fence',
    '1',
    '--owner',
    now.owner,
  ]);
  expect(settled.code, settled.stderr).toBe(0);
  expect(await store.get(ref)).toMatchObject({ state: 'completed', owner: now.owner });
  await store.forget({ tenant });
}

it('resolve/release --fence --owner refuse a record re-lived since inspect (Redis)', async () => {
  const prefix = randomPrefix('cli-expect');
  const client = await connectRedis();
  const store = new RedisStore({ client, prefix });
  try {
    await reLivedScenario(store, ['--store', redisUrl, '--prefix', prefix]);
  } finally {
    await store.close();
    await deletePrefix(client, prefix);
    client.disconnect();
  }
}, 120_000);

it('resolve/release --fence --owner refuse a record re-lived since inspect (PostgreSQL)', async () => {
  await requirePostgres();
  const schema = uniqueSchemaName('cli_expect');
  const pool = createPool({ max: 2 });
  const store = new PostgresStore({ pool, schema });
  try {
    await store.ensureSchema();
    await reLivedScenario(store, ['--store', databaseUrl, '--schema', schema]);
  } finally {
    await store.close();
    await pool.end();
    await dropSchema(schema);
  }
}, 120_000);
