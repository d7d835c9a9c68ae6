import { randomUUID } from 'node:crypto';
import type { IdempotencyStore } from '@toolfence/core/store';
import { type Row, row } from './report.js';
import { median } from './stats.js';

/**
 * The operator's path beside the hot one: 20,000 records across 10 tenants (1 in 100
 * indeterminate, the rest completed), then `list` filtered by state and tenant, every page,
 * wall time (target: under a second). A layout that moves cost off the hot path shows here.
 * The third row lists the indeterminate records of every tenant at once (the operator's 3 a.m.
 * question), which only an index of those records keeps off a scan of the whole table.
 * The Redis and PostgreSQL suites both print these rows.
 */
export async function listingRows(label: string, store: IdempotencyStore): Promise<Row[]> {
  const tenants = Array.from({ length: 10 }, (_, at) => `list-${at}-${randomUUID()}`);
  const perTenant = 2_000;
  const options = {
    // Its own tool name, so the listing across tenants counts only these records.
    tool: 'bench-listing',
    fingerprint: 'f',
    leaseMs: 60_000,
    retentionMs: 600_000,
    mode: 'at-most-once',
    maxAttempts: 1,
    checkFingerprint: true,
  } as const;
  const refs = tenants.flatMap((tenant) =>
    Array.from({ length: perTenant }, (_, at) => ({ tenant, key: `k${String(at).padStart(6, '0')}` })),
  );
  let next = 0;
  const worker = async () => {
    while (next < refs.length) {
      const at = next++;
      const ref = refs[at]!;
      const owner = randomUUID();
      const claimed = await store.claim(ref, { ...options, owner });
      if (claimed.status !== 'acquired')
        throw new Error(`listing fill: the claim answered ${claimed.status}`);
      const holder = { fence: claimed.fence, owner };
      if (at % 100 === 0) {
        await store.markIndeterminate(
          ref,
          holder,
          { type: 'Bench', message: 'unknown' },
          options.retentionMs,
        );
      } else {
        await store.complete(ref, holder, '"done"', options.retentionMs);
      }
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  const listAll = async (states: readonly ('indeterminate' | 'completed')[], tenant: string | undefined) => {
    let count = 0;
    let cursor: string | undefined;
    do {
      const page = await store.list({
        ...(tenant === undefined ? { allTenants: true, tool: options.tool } : { tenant }),
        states,
        limit: 100,
        ...(cursor === undefined ? {} : { cursor }),
      });
      count += page.records.length;
      cursor = page.cursor;
    } while (cursor !== undefined);
    return count;
  };
  const timed = async (work: () => Promise<number>, expected: number) => {
    const samples: number[] = [];
    for (let round = 0; round < 5; round++) {
      const started = performance.now();
      const found = await work();
      samples.push(performance.now() - started);
      if (found !== expected) throw new Error(`listing: ${found} records listed, ${expected} expected`);
    }
    return median(samples);
  };
  const rare = await timed(async () => {
    let found = 0;
    for (const tenant of tenants) found += await listAll(['indeterminate'], tenant);
    return found;
  }, refs.length / 100);
  const across = await timed(() => listAll(['indeterminate'], undefined), refs.length / 100);
  const common = await timed(() => listAll(['completed'], tenants[0]!), perTenant - perTenant / 100);
  return [
    row(
      `${label}: list 20,000 records in 10 tenants: each tenant's indeterminate (1 %), all pages of 100`,
      'ms',
      rare,
      null,
      '<= 1000',
    ),
    row(
      `${label}: list 20,000 records in 10 tenants: every tenant's indeterminate at once, all pages of 100`,
      'ms',
      across,
      null,
      '<= 1000',
    ),
    row(
      `${label}: list 20,000 records in 10 tenants: one tenant's completed (1,980), all pages of 100`,
      'ms',
      common,
      null,
      '<= 1000',
    ),
  ];
}
