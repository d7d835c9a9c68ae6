import { createHash, randomBytes } from 'node:crypto';
import { idempotencyKey } from '@toolfence/core';
import { type Row, row } from '../lib/report.js';
import { median, timeBatchMicroseconds } from '../lib/stats.js';
import { scaled, toolArguments } from '../lib/workloads.js';

const sizes = [
  { label: '~100 B', bytes: 100, iterations: 4_000, target: null },
  { label: '1 KB', bytes: 1024, iterations: 800, target: '<= 2' },
  { label: '64 KB', bytes: 65536, iterations: 8, target: null },
] as const;

/** A secret for keyed mode (docs/key-spec.md section 6): 32 random bytes, as a guard would hold it. */
const secret = randomBytes(32);

/**
 * `idempotencyKey` (RFC 8785 + NFC canonical JSON of the envelope, SHA-256) against the naive
 * key `sha256(JSON.stringify(args))`, and keyed `idempotencyKey` (HMAC-SHA-256 of the same text)
 * against unkeyed, on the same argument objects, in interleaved batches.
 */
export async function keysSuite(): Promise<Row[]> {
  const rows: Row[] = [];
  const rounds = scaled(11);
  for (const size of sizes) {
    // Distinct objects per iteration, made before timing, so no cache of any kind can help.
    const pool = Array.from({ length: 64 }, (_, id) => toolArguments(size.bytes, id));
    const ours = (index: number) =>
      idempotencyKey({
        tenant: 'acme',
        runId: 'run-1',
        tool: 'place_order',
        arguments: pool[index % pool.length]!,
      });
    const keyed = (index: number) =>
      idempotencyKey({
        tenant: 'acme',
        runId: 'run-1',
        tool: 'place_order',
        arguments: pool[index % pool.length]!,
        secret,
      });
    const naive = (index: number) =>
      createHash('sha256')
        .update(JSON.stringify(pool[index % pool.length]!))
        .digest('hex');
    const iterations = scaled(size.iterations);
    // Warm both paths up (JIT) before anything is recorded.
    await timeBatchMicroseconds(iterations, ours);
    await timeBatchMicroseconds(iterations, naive);
    await timeBatchMicroseconds(iterations, keyed);
    const oursMicroseconds: number[] = [];
    const naiveMicroseconds: number[] = [];
    const keyedMicroseconds: number[] = [];
    const workloads = [
      { run: ours, times: oursMicroseconds },
      { run: naive, times: naiveMicroseconds },
      { run: keyed, times: keyedMicroseconds },
    ];
    for (let round = 0; round < rounds; round++) {
      // Rotate the order from round to round, so no workload always gets the warm slot.
      for (let slot = 0; slot < workloads.length; slot++) {
        const workload = workloads[(round + slot) % workloads.length]!;
        workload.times.push(await timeBatchMicroseconds(iterations, workload.run));
      }
    }
    rows.push(
      row(
        `keys: idempotencyKey, ${size.label} args (vs sha256(JSON.stringify))`,
        'µs CPU/key',
        median(oursMicroseconds),
        median(naiveMicroseconds),
        size.target,
      ),
      row(
        `keys: keyed idempotencyKey (HMAC-SHA-256), ${size.label} args (vs unkeyed, SHA-256)`,
        'µs CPU/key',
        median(keyedMicroseconds),
        median(oursMicroseconds),
      ),
    );
  }
  return rows;
}
