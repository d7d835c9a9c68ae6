// DynamoDBStore.waitForSettle: DynamoDB tells no one when an item changes (Streams reach a Lambda
// or a poller in ~hundreds of ms, and cost a shard reader per waiter host: docs/dynamodb.md), so
// the waiter reads the record (strongly consistent GetItem) with a bounded backoff: 25 ms,
// doubling, at most `maxPollIntervalMs`, and wakes at the holder's lease deadline exactly.
import type { RecordRef, WaitOptions, WaitResult } from '@toolfence/core/store';
import type { RecordsTable } from './backend.js';
import { isLive } from './record-codec.js';

const FIRST_PAUSE_MS = 25;

/** A pause that ends early when `signal` aborts (the caller then rejects with its reason). */
function pauseFor(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, Math.max(0, ms));
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export async function waitForSettle(
  table: RecordsTable,
  ref: RecordRef,
  options: WaitOptions,
): Promise<WaitResult> {
  const { signal } = options;
  // The deadline on the monotonic clock; leases on the writer's clock (Date.now(), as claims judge).
  const deadline = performance.now() + options.timeoutMs;
  let pause = FIRST_PAUSE_MS;
  for (;;) {
    if (signal?.aborted) throw signal.reason;
    const record = await table.run('waitForSettle', (op) => table.read(op, ref, false));
    if (signal?.aborted) throw signal.reason;
    const now = Date.now();
    if (!isLive(record, now) || record.state !== 'in_progress') return 'settled';
    // A claim now would not be busy for this lease (same clock, same comparison as claim).
    if (record.leaseExpiresAtMs <= now) return 'lease_expired';
    const left = deadline - performance.now();
    if (left <= 0) return 'timeout';
    // +1: a timer may fire a millisecond early; the loop re-reads and re-arms anyway.
    await pauseFor(Math.min(pause, left, record.leaseExpiresAtMs - now + 1), signal);
    pause = Math.min(pause * 2, table.maxPollIntervalMs);
    table.assertOpen('waitForSettle');
  }
}
