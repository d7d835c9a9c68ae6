// SQLiteStore across SEPARATE PROCESSES on one file: four child processes, each with its own
// connection, race for the same keys; a waiter in one process is woken by a settle in another.
import { randomBytes } from 'node:crypto';
import type { RecordRef } from '@toolfence/core';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions, randomRef } from '../../../test/support/claims.js';
import { type SqliteWorker, spawnSqliteWorker, sqliteDirectory } from '../../../test/support/sqlite.js';

const DAY_MS = 86_400_000;
const directory = sqliteDirectory('processes');
const path = directory.file('shared.db');
let store: SQLiteStore;
let workers: SqliteWorker[];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const ref = (): RecordRef => randomRef();
const shuffled = <T>(items: T[]): T[] => {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(Math.random() * (index + 1));
    [copy[index], copy[other]] = [copy[other] as T, copy[index] as T];
  }
  return copy;
};
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
};

beforeAll(async () => {
  store = new SQLiteStore({ path });
  await store.ensureSchema();
  workers = await Promise.all(Array.from({ length: 4 }, () => spawnSqliteWorker({ path })));
  expect(new Set(workers.map((worker) => worker.pid)).size).toBe(4);
}, 60_000);

afterAll(async () => {
  await Promise.all((workers ?? []).map((worker) => worker.stop()));
  await store?.close();
  directory.remove();
});

describe('SQLiteStore across processes', () => {
  it('4 processes claim the same 50 keys at once, 25 rounds: exactly one acquired per key', async () => {
    for (let round = 0; round < 25; round++) {
      const keys = Array.from({ length: 50 }, ref);
      // Each process claims every key, in its own random order, all processes at once.
      const perWorker = await Promise.all(
        workers.map((worker) => {
          const order = shuffled(keys.map((_, index) => index));
          return worker
            .run(order.map((index) => ({ method: 'claim', args: [keys[index], claimOptions()] })))
            .then((results) =>
              results.map((result, position) => ({ index: order[position] as number, result })),
            );
        }),
      );
      for (let index = 0; index < keys.length; index++) {
        const statuses = perWorker.map(
          (results) =>
            (results.find((entry) => entry.index === index)?.result.value as { status: string } | undefined)
              ?.status,
        );
        expect(
          statuses.filter((status) => status === 'acquired'),
          `round ${round} key ${index}`,
        ).toHaveLength(1);
        expect(
          statuses.filter((status) => status === 'busy'),
          `round ${round} key ${index}`,
        ).toHaveLength(3);
      }
    }
  }, 60_000);

  it('4 processes race to take over expired leases, 20 rounds: one takeover per key with fence 2', async () => {
    for (let round = 0; round < 20; round++) {
      const keys = Array.from({ length: 5 }, ref);
      for (const key of keys)
        expect((await store.claim(key, claimOptions({ leaseMs: 40 }))).status).toBe('acquired');
      await sleep(60);
      const perWorker = await Promise.all(
        workers.map((worker) =>
          worker.run(keys.map((key) => ({ method: 'claim', args: [key, claimOptions()] }))),
        ),
      );
      for (let index = 0; index < keys.length; index++) {
        const results = perWorker.map((results) => results[index]?.value as Record<string, unknown>);
        const winners = results.filter((result) => result.status === 'acquired');
        expect(winners, `round ${round} key ${index}`).toHaveLength(1);
        expect(winners[0]).toMatchObject({ fence: 2, attempt: 2, takeover: true });
        expect(results.filter((result) => result.status === 'busy')).toHaveLength(3);
        expect(await store.get(keys[index] as RecordRef)).toMatchObject({
          fence: 2,
          attempt: 2,
          state: 'in_progress',
        });
      }
    }
  }, 60_000);

  it('ensureSchema from 4 processes at once on a fresh file applies the migration once', async () => {
    const fresh = directory.file(`fresh-${randomBytes(3).toString('hex')}.db`);
    const racers = await Promise.all(Array.from({ length: 4 }, () => spawnSqliteWorker({ path: fresh })));
    try {
      const results = await Promise.all(racers.map((racer) => racer.call('ensureSchema')));
      expect(results.every((result) => result.ok)).toBe(true);
      const applied = results.map((result) => (result.value as { applied: number[] }).applied);
      expect(applied.filter((versions) => versions.length > 0)).toEqual([[1, 2, 3, 4, 5, 6]]);
      expect(applied.filter((versions) => versions.length === 0)).toHaveLength(3);
      const target = ref();
      expect((await racers[2]!.call('claim', target, claimOptions())).value).toMatchObject({
        status: 'acquired',
      });
    } finally {
      await Promise.all(racers.map((racer) => racer.stop()));
    }
  }, 60_000);

  it('a waiter in one process is woken by a complete in another (latency measured)', async () => {
    const [holder, waiter] = workers as [SqliteWorker, SqliteWorker];
    const latenciesMs: number[] = [];
    for (let iteration = 0; iteration < 30; iteration++) {
      const target = ref();
      const options = claimOptions();
      expect((await holder.call('claim', target, options)).value).toMatchObject({ status: 'acquired' });
      const waiting = waiter.call('waitForSettle', target, { timeoutMs: 10_000 });
      await sleep(30 + Math.random() * 20); // the waiter has read the record and is idle
      const completed = await holder.call(
        'complete',
        target,
        { fence: 1, owner: options.owner },
        '"done"',
        DAY_MS,
      );
      expect(completed.value).toEqual({ status: 'completed' });
      const woken = await waiting;
      expect(woken.value).toBe('settled');
      latenciesMs.push(woken.atMs - completed.atMs);
    }
    const summary = {
      medianMs: Number(quantile(latenciesMs, 0.5).toFixed(2)),
      p90Ms: Number(quantile(latenciesMs, 0.9).toFixed(2)),
      maxMs: Number(Math.max(...latenciesMs).toFixed(2)),
    };
    console.log(`[sqlite] cross-process wake-up after complete (30 runs): ${JSON.stringify(summary)}`);
    // The -wal watch wakes within milliseconds; the safety poll (250 ms) bounds a missed event.
    expect(summary.medianMs).toBeLessThan(50);
    expect(summary.maxMs).toBeLessThan(400);
  }, 60_000);

  it('a waiter in one process wakes at the lease deadline of a holder in another, and then may claim', async () => {
    const [holder, waiter] = workers as [SqliteWorker, SqliteWorker];
    for (let iteration = 0; iteration < 5; iteration++) {
      const target = ref();
      const claimed = await holder.call('claim', target, claimOptions({ leaseMs: 200 }));
      const deadline = (claimed.value as { leaseExpiresAtMs: number }).leaseExpiresAtMs;
      const [woken, claimedAfter] = await waiter.run([
        { method: 'waitForSettle', args: [target, { timeoutMs: 10_000 }] },
        { method: 'claim', args: [target, claimOptions()] },
      ]);
      expect(woken?.value).toBe('lease_expired');
      expect(woken!.atMs).toBeGreaterThanOrEqual(deadline - 1);
      expect(claimedAfter?.value).toMatchObject({ status: 'acquired', fence: 2, takeover: true });
    }
  }, 60_000);

  it('a renewal in another process keeps the waiter waiting (it re-reads at the old deadline)', async () => {
    const [holder, waiter] = workers as [SqliteWorker, SqliteWorker];
    const target = ref();
    const options = claimOptions({ leaseMs: 200 });
    await holder.call('claim', target, options);
    const waiting = waiter.call('waitForSettle', target, { timeoutMs: 10_000 });
    await sleep(100);
    expect((await holder.call('renew', target, { fence: 1, owner: options.owner }, 600)).value).toMatchObject(
      {
        status: 'renewed',
      },
    );
    const startedMs = Date.now();
    const woken = await waiting;
    expect(woken.value).toBe('lease_expired');
    // Woken by the renewed deadline (~600 ms after the renewal), not the first one (~100 ms).
    expect(Date.now() - startedMs).toBeGreaterThan(350);
  }, 30_000);
});
