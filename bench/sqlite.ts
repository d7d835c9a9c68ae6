// SQLiteStore on this machine: how long each call blocks the event loop (better-sqlite3 is
// synchronous, so a call's whole transaction runs before it returns its promise), and how soon a
// waiter in another process hears of a settle. Figures for docs/sqlite.md.
//
//   npx tsx --conditions=@toolfence/source bench/sqlite.ts [--dir /path/on/local/disk]
//
// Run it on the filesystem you will use: with synchronous FULL the fsync of each commit is most
// of a write's cost, and that depends on the disk.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { ClaimOptions, RecordRef } from '@toolfence/core';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import { spawnSqliteWorker } from '../test/support/sqlite.js';

const { values } = parseArgs({ options: { dir: { type: 'string' }, calls: { type: 'string' } } });
const directory = mkdtempSync(join(values.dir ?? tmpdir(), 'toolfence-sqlite-bench-'));
const calls = Number(values.calls ?? 2000);
const DAY_MS = 86_400_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const ref = (): RecordRef => ({ tenant: 'bench', key: randomBytes(32).toString('hex') });
const options = (): ClaimOptions => ({
  tool: 'refund',
  fingerprint: 'f'.repeat(64),
  owner: randomUUID(),
  leaseMs: 30_000,
  retentionMs: DAY_MS,
  mode: 'at-least-once',
  maxAttempts: 3,
  checkFingerprint: false,
});
const quantile = (samples: number[], q: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
};
const describe = (samples: number[], unit: 'us' | 'ms') => {
  const factor = unit === 'us' ? 1000 : 1;
  const format = (ms: number) => (ms * factor).toFixed(unit === 'us' ? 0 : 2);
  return `median ${format(quantile(samples, 0.5))} ${unit}, p90 ${format(quantile(samples, 0.9))}, p99 ${format(quantile(samples, 0.99))}`;
};

/** Time of the synchronous part of a call: everything, since no store call awaits anything. */
function blocked(call: () => Promise<unknown>): number {
  const startedMs = performance.now();
  void call();
  return performance.now() - startedMs;
}

async function perOperation(synchronous: 'full' | 'normal'): Promise<void> {
  const store = new SQLiteStore({ path: join(directory, `ops-${synchronous}.db`), synchronous });
  await store.ensureSchema();
  const samples = {
    claim: [] as number[],
    complete: [] as number[],
    repeat: [] as number[],
    busy: [] as number[],
    renew: [] as number[],
  };
  for (let index = 0; index < calls; index++) {
    const target = ref();
    const claimer = options();
    samples.claim.push(blocked(() => store.claim(target, claimer)));
    samples.busy.push(blocked(() => store.claim(target, options())));
    samples.renew.push(blocked(() => store.renew(target, { fence: 1, owner: claimer.owner }, 30_000)));
    samples.complete.push(
      blocked(() =>
        store.complete(target, { fence: 1, owner: claimer.owner }, '{"refundId":"re_1"}', DAY_MS),
      ),
    );
    samples.repeat.push(blocked(() => store.claim(target, options())));
    if (index % 200 === 0) await sleep(0); // let the event loop breathe; timings stay per call
  }
  console.log(`synchronous=${synchronous.toUpperCase()}, ${calls} calls each (event loop blocked per call):`);
  for (const [name, values] of Object.entries(samples))
    console.log(`  ${name.padEnd(8)} ${describe(values, 'us')}`);
  // Steady state of a repeat alone (the loop above interleaves fsyncs, which cool the caches).
  const target = ref();
  const claimer = options();
  await store.claim(target, claimer);
  await store.complete(target, { fence: 1, owner: claimer.owner }, '"r"', DAY_MS);
  const repeats = Array.from({ length: calls }, () => blocked(() => store.claim(target, options())));
  console.log(`  repeat, ${calls} in a row on one key: ${describe(repeats, 'us')}`);
  await store.close();
}

async function crossProcessWake(watchWal: boolean): Promise<void> {
  const path = join(directory, `wake-${watchWal}.db`);
  const setup = new SQLiteStore({ path });
  await setup.ensureSchema();
  await setup.close();
  const [holder, waiter] = await Promise.all([
    spawnSqliteWorker({ path }),
    spawnSqliteWorker({ path, watchWal }),
  ]);
  const latencies: number[] = [];
  try {
    for (let index = 0; index < 50; index++) {
      const target = ref();
      const claimer = options();
      await holder!.call('claim', target, claimer);
      const waiting = waiter!.call('waitForSettle', target, { timeoutMs: 10_000 });
      await sleep(20 + Math.random() * 30);
      const completed = await holder!.call(
        'complete',
        target,
        { fence: 1, owner: claimer.owner },
        '"x"',
        DAY_MS,
      );
      const woken = await waiting;
      if (woken.value !== 'settled') throw new Error(`waiter answered ${String(woken.value)}`);
      latencies.push(woken.atMs - completed.atMs);
    }
  } finally {
    await Promise.all([holder!.stop(), waiter!.stop()]);
  }
  console.log(
    `cross-process wake-up after complete, ${watchWal ? '-wal watch' : 'poll only (watchWal: false)'}, 50 runs: ${describe(latencies, 'ms')}, max ${Math.max(...latencies).toFixed(2)} ms`,
  );
}

async function contention(synchronous: 'full' | 'normal'): Promise<void> {
  const path = join(directory, `contention-${synchronous}.db`);
  const setup = new SQLiteStore({ path });
  await setup.ensureSchema();
  await setup.close();
  const workers = await Promise.all(
    Array.from({ length: 4 }, () => spawnSqliteWorker({ path, synchronous })),
  );
  const perWorker = 500;
  try {
    const startedMs = performance.now();
    await Promise.all(
      workers.map((worker) =>
        worker.run(
          Array.from({ length: perWorker }, () => {
            const claimer = options();
            const target = ref();
            return [
              { method: 'claim', args: [target, claimer] },
              { method: 'complete', args: [target, { fence: 1, owner: claimer.owner }, '"x"', DAY_MS] },
            ];
          }).flat(),
        ),
      ),
    );
    const elapsedMs = performance.now() - startedMs;
    console.log(
      `synchronous=${synchronous.toUpperCase()}: 4 processes x ${perWorker} first calls (claim + complete) on one file: ${((4 * perWorker) / (elapsedMs / 1000)).toFixed(0)} calls/s (${elapsedMs.toFixed(0)} ms)`,
    );
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
  }
}

try {
  console.log(`SQLiteStore bench in ${directory} (Node ${process.version})`);
  await perOperation('full');
  await perOperation('normal');
  await crossProcessWake(true);
  await crossProcessWake(false);
  await contention('full');
  await contention('normal');
} finally {
  rmSync(directory, { recursive: true, force: true });
}
