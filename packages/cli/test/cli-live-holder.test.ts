// Issue #27 through the CLI as a real process, on the shared Redis and PostgreSQL: a record whose
// holder still runs (its caller was answered at its timeout, its lease is renewed) is shown as
// running and refused to `resolve`/`release` (exit 4) unless `--force --reason`, which the history
// keeps; a record whose holder is gone (lease expired, still in_progress) is settled on the holder
// `inspect` showed.
import {
  Guard,
  Idempotency,
  type IdempotencyRecord,
  type IdempotencyStore,
  IndeterminateOutcomeError,
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

async function liveAndGoneHolders(store: IdempotencyStore, storeArgs: readonly string[]): Promise<void> {
  const tenant = `acme-${Math.random().toString(16).slice(2, 10)}`;
  const guard = new Guard({ store, tenant });
  const cli = (args: readonly string[]) => runCli([...storeArgs, '--tenant', tenant, ...args]);
  const policy = { kind: Idempotency.EFFECTFUL, timeoutMs: 100, leaseMs: 2000, heartbeatMs: 500 };
  let finish!: () => void;
  const provider = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const stopped = await guard
    .run({ tool: 'refund_order', arguments: { orderId: 'A-1' }, runId: 'run-1', policy }, async () => {
      await provider; // the provider has not answered yet
      return 'refunded';
    })
    .catch((error: unknown) => error);
  expect(IndeterminateOutcomeError.isInstance(stopped)).toBe(true);
  const key = (stopped as IndeterminateOutcomeError).key;
  const running = (await store.get({ tenant, key })) as IdempotencyRecord;
  expect(running).toMatchObject({ state: 'in_progress' });

  try {
    const listed = await cli(['list', '--state', 'in_progress']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`still running on ${running.owner} since `);
    expect(listed.stdout).toContain(', lease live until ');
    const inspected = await cli(['inspect', key]);
    expect(inspected.stdout).toMatch(/running {3}still running on .* not settleable while it runs/);
    const inspectedJson = await cli(['inspect', key, '--json']);
    expect(inspectedJson.json[0]).toMatchObject({ holderAlive: true });

    for (const args of [
      ['release', key],
      ['resolve', key, '--outcome', '"refunded"'],
    ]) {
      const refused = await cli([...args, '--reason', 'nothing in the ledger']);
      expect(refused.code, `${args[0]}: ${refused.stderr}`).toBe(4);
      expect(refused.stderr).toContain(`still running on ${running.owner}`);
      expect(refused.stderr).toContain('nothing was settled');
    }
    const json = await cli(['release', key, '--json']);
    expect(json.code).toBe(4);
    expect(json.json[0]).toMatchObject({
      status: 'holder_alive',
      holder: { fence: 1, owner: running.owner },
    });
    const noReason = await cli(['release', key, '--force']);
    expect(noReason.code, noReason.stderr).toBe(2);
    expect(noReason.stderr).toContain('--force needs --reason');
    expect(await guard.resolutions(key)).toEqual([]);
    expect((await store.get({ tenant, key }))?.state).toBe('in_progress');

    const forced = await cli([
      'release',
      key,
      '--force',
      '--reason',
      'worker wedged, provider checked',
      '--by',
      'ana',
    ]);
    expect(forced.code, forced.stderr).toBe(0);
    const history = await cli(['inspect', key]);
    expect(history.stdout).toContain(
      'released (was in_progress, attempt 1, FORCED over a live holder) by ana: worker wedged, provider checked',
    );
    expect(await guard.resolutions(key)).toMatchObject([{ fromState: 'in_progress', forced: true }]);
  } finally {
    finish();
  }

  // A holder that is gone: its lease expired, nobody claimed again (the worker was killed).
  const ref = { tenant, key: 'e'.repeat(64) };
  const owner = 'killed-worker:1';
  const claim = await store.claim(ref, {
    tool: 'refund_order',
    fingerprint: 'f'.repeat(64),
    owner,
    leaseMs: 100,
    retentionMs: DAY_MS,
    mode: 'at-most-once',
    maxAttempts: 1,
    checkFingerprint: false,
  });
  expect(claim.status).toBe('acquired');
  const deadline = Date.now() + 10_000;
  let gone = await cli(['list']);
  while (!gone.stdout.includes('lease_expired') && Date.now() < deadline) gone = await cli(['list']);
  expect(gone.stdout).toContain(`holder ${owner} gone: lease expired`);
  const inspectedGone = await cli(['inspect', ref.key]);
  expect(inspectedGone.stdout).toContain('running   no: holder gone');
  const settled = await cli([
    'resolve',
    ref.key,
    '--outcome',
    '"refunded R-9"',
    '--fence',
    '1',
    '--owner',
    owner,
    '--reason',
    'R-9 in the ledger',
  ]);
  expect(settled.code, settled.stderr).toBe(0);
  expect(await store.get(ref)).toMatchObject({ state: 'completed', outcome: '"refunded R-9"' });
  expect(await guard.resolutions(ref.key)).toMatchObject([
    { fromState: 'in_progress', reason: 'R-9 in the ledger' },
  ]);

  // Item 4: a resolution keeps the retention the call was claimed with, and says which.
  const weekMs = 7 * DAY_MS;
  const week = { kind: Idempotency.EFFECTFUL, retentionMs: weekMs };
  const weekKey = await guard
    .run({ tool: 'refund_order', arguments: { orderId: 'A-7' }, runId: 'run-7', policy: week }, () =>
      Promise.reject(new Error('socket hang up')),
    )
    .catch((error: IndeterminateOutcomeError) => error.key);
  const inspectedWeek = await cli(['inspect', weekKey]);
  expect(inspectedWeek.stdout).toContain(
    "retention 7d (the call's: a resolve or release keeps the record that long",
  );
  const resolvedWeek = await cli(['resolve', weekKey, '--outcome', '"refunded"', '--by', 'ana']);
  expect(resolvedWeek.code, resolvedWeek.stderr).toBe(0);
  expect(resolvedWeek.stdout).toContain('kept 7d (the retention the call was claimed with)');
  const settledWeek = (await store.get({ tenant, key: weekKey })) as IdempotencyRecord;
  expect(settledWeek.expiresAtMs - (settledWeek.updatedAtMs ?? 0)).toBe(weekMs);

  // Item 5: an outcome the application's codec could not read is refused before anything is written.
  const appGuard = new Guard({
    store,
    tenant,
    codec: {
      name: 'superjson',
      encode: (value) => `sj:${JSON.stringify(value)}`,
      decode: (text) => JSON.parse(text.slice(3)),
    },
  });
  const codecKey = await appGuard
    .run(
      {
        tool: 'refund_order',
        arguments: { orderId: 'A-8' },
        runId: 'run-8',
        policy: { kind: Idempotency.EFFECTFUL },
      },
      () => Promise.reject(new Error('socket hang up')),
    )
    .catch((error: IndeterminateOutcomeError) => error.key);
  expect((await cli(['inspect', codecKey])).stdout).toContain('codec     superjson');
  const before = await store.get({ tenant, key: codecKey });
  const wrongCodec = await cli(['resolve', codecKey, '--outcome', '"refunded"']);
  expect(wrongCodec.code, wrongCodec.stderr).toBe(2);
  expect(wrongCodec.stderr).toContain('the record was written with the codec "superjson"');
  expect(wrongCodec.stderr).toContain("Resolve it with the application's own Guard");
  expect(await store.get({ tenant, key: codecKey })).toEqual(before);
  // A release needs no codec.
  const releasedCodec = await cli(['release', codecKey, '--reason', 'not in the ledger']);
  expect(releasedCodec.code, releasedCodec.stderr).toBe(0);
  await store.forget({ tenant });
}

it('a live holder is refused (exit 4) unless forced; a gone holder is settled (Redis)', async () => {
  const prefix = randomPrefix('cli-live');
  const client = await connectRedis();
  const store = new RedisStore({ client, prefix });
  try {
    await liveAndGoneHolders(store, ['--store', redisUrl, '--prefix', prefix]);
  } finally {
    await store.close();
    await deletePrefix(client, prefix);
    client.disconnect();
  }
}, 120_000);

it('a live holder is refused (exit 4) unless forced; a gone holder is settled (PostgreSQL)', async () => {
  await requirePostgres();
  const schema = uniqueSchemaName('cli_live');
  const pool = createPool({ max: 2 });
  const store = new PostgresStore({ pool, schema });
  try {
    await store.ensureSchema();
    await liveAndGoneHolders(store, ['--store', databaseUrl, '--schema', schema]);
  } finally {
    await store.close();
    await pool.end();
    await dropSchema(schema);
  }
}, 120_000);
