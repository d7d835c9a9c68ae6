import { Guard, idempotencyKey, MemoryStore } from '@toolfence/core';
import { type Row, row } from '../lib/report.js';
import { median, timeBatchMicroseconds } from '../lib/stats.js';
import { idempotentPolicy, outcome100, scaled, toolArguments } from '../lib/workloads.js';

/**
 * `guard.run` on a MemoryStore (first call: claim, body, complete; repeat: one claim answered
 * with the recorded outcome) against `idempotencyKey` alone on the same ~100 B arguments: what
 * the guard adds over deriving the key.
 */
export async function memorySuite(): Promise<Row[]> {
  const guard = new Guard({ store: new MemoryStore() });
  const iterations = scaled(2_000);
  const rounds = scaled(11);
  const repeatPool = 1_000;
  const argumentsOf = (id: number) => toolArguments(100, id);
  const call = (id: number) =>
    guard.run(
      { tool: 'place_order', runId: 'run-1', arguments: argumentsOf(id), policy: idempotentPolicy },
      () => outcome100(id),
    );
  for (let id = 0; id < repeatPool; id++) await call(id);

  let nextFirst = repeatPool;
  const first = () => call(nextFirst++);
  const repeat = (index: number) => call(index % repeatPool);
  const keyOnly = (index: number) =>
    idempotencyKey({ tenant: 'default', runId: 'run-1', tool: 'place_order', arguments: argumentsOf(index) });

  await timeBatchMicroseconds(iterations, first);
  await timeBatchMicroseconds(iterations, repeat);
  await timeBatchMicroseconds(iterations, keyOnly);
  const firstMicroseconds: number[] = [];
  const repeatMicroseconds: number[] = [];
  const keyMicroseconds: number[] = [];
  const candidates = [
    { samples: firstMicroseconds, operation: first },
    { samples: repeatMicroseconds, operation: repeat },
    { samples: keyMicroseconds, operation: keyOnly },
  ];
  for (let round = 0; round < rounds; round++) {
    for (let offset = 0; offset < candidates.length; offset++) {
      const candidate = candidates[(round + offset) % candidates.length]!;
      candidate.samples.push(await timeBatchMicroseconds(iterations, candidate.operation));
    }
  }
  const keyMedian = median(keyMicroseconds);
  return [
    row(
      'memory: guard.run first call (vs idempotencyKey alone)',
      'µs CPU/call',
      median(firstMicroseconds),
      keyMedian,
      '<= 3',
    ),
    row(
      'memory: guard.run repeat (vs idempotencyKey alone)',
      'µs CPU/call',
      median(repeatMicroseconds),
      keyMedian,
      '<= 2',
    ),
  ];
}
