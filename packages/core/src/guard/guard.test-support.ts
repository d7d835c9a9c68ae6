// Helpers shared by the guard's test files (guard-*.test.ts). Not shipped, not built: the
// package's `files` and tsconfig.json exclude *.test-support.ts as they exclude *.test.ts.

import { MemoryStore } from '../memory/memory-store.js';
import { Idempotency, type IdempotencyPolicy } from '../policy/idempotency-policy.js';
import type { IdempotencyStore } from '../store/idempotency-store.js';
import { Guard } from './guard.js';
import type { GuardEvent } from './guard-events.js';
import type { ErrorDescriber } from './recorded-error.js';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
export const effectful: IdempotencyPolicy = { kind: Idempotency.EFFECTFUL };
export const idempotent: IdempotencyPolicy = { kind: Idempotency.IDEMPOTENT };

export function setup(options: { store?: IdempotencyStore; describeError?: ErrorDescriber } = {}) {
  const store = options.store ?? new MemoryStore();
  const events: GuardEvent[] = [];
  const guard = new Guard({
    store,
    tenant: 'acme',
    onEvent: (event) => events.push(event),
    ...(options.describeError === undefined ? {} : { describeError: options.describeError }),
  });
  const types = () => events.map((event) => event.type);
  return { store, guard, events, types };
}

export const call = (args: Record<string, unknown>, policy: IdempotencyPolicy = effectful, extra = {}) => ({
  tool: 'refund',
  arguments: args,
  runId: 'run-1',
  policy,
  ...extra,
});

export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error('expected a rejection'),
    (error: unknown) => error,
  );
}
