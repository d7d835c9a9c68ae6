import { Idempotency, type IdempotencyPolicy } from '@toolfence/core';

/**
 * Tool arguments of about `bytes` bytes of JSON, shaped like real tool calls: short strings,
 * numbers, booleans, a nested object and, for the larger sizes, an array of line items.
 * `id` makes the call unique (first calls) or repeats one (repeats).
 */
export function toolArguments(bytes: 100 | 1024 | 65536, id: number): Record<string, unknown> {
  if (bytes === 100) {
    return { orderId: `A-${id}`, amount: 42.5, currency: 'EUR', email: 'ana@example.com', notify: true };
  }
  const items: Record<string, unknown>[] = [];
  const target = bytes;
  const base: Record<string, unknown> = {
    orderId: `A-${id}`,
    customer: { name: 'Ana María Núñez', email: 'ana@example.com', tier: 'gold', since: '2019-04-01' },
    amount: 1249.9,
    currency: 'EUR',
    notify: true,
    note: 'Leave the parcel with the concierge; call before 18:00.',
    items,
  };
  // Grow by each item's own length (plus its comma): stringifying the whole object per item
  // would be quadratic at 64 KB.
  let length = JSON.stringify(base).length;
  for (let index = 0; length < target - 45; index++) {
    const item = {
      sku: `SKU-${index.toString().padStart(6, '0')}`,
      qty: (index % 5) + 1,
      price: 9.99 + index,
    };
    items.push(item);
    length += JSON.stringify(item).length + (index === 0 ? 0 : 1);
  }
  return base;
}

/** A tool result whose JSON is exactly 100 bytes (the outcome stored per record). */
export function outcome100(id: number): Record<string, unknown> {
  const shell = { ok: true, confirmation: `C-${id}`, detail: '' };
  const padding = 100 - JSON.stringify(shell).length;
  return { ...shell, detail: 'x'.repeat(Math.max(0, padding)) };
}

/** The store-level claim options the probes under bench/probes/ send for `owner` (a day's retention). */
export function probeClaimOptions(owner: string) {
  return {
    tool: 'place_order',
    fingerprint: 'f'.repeat(64),
    owner,
    leaseMs: 30000,
    retentionMs: 86400000,
    mode: 'at-least-once' as const,
    maxAttempts: 3,
    checkFingerprint: false,
  };
}

export const idempotentPolicy: IdempotencyPolicy = { kind: Idempotency.IDEMPOTENT };
export const effectfulPolicy: IdempotencyPolicy = { kind: Idempotency.EFFECTFUL };

/** Ops per round and rounds, scaled by BENCH_SCALE (default 1) for quicker or steadier runs. */
export const scale = Number(process.env.BENCH_SCALE ?? '1');

export function scaled(count: number): number {
  return Math.max(1, Math.round(count * scale));
}
