// Conformance cases of `list` (docs/store-contract.md, "Listing"): paging, order, filters,
// tenants, no outcomes, retention.
import type { ListedRecord, ListState, RecordRef } from '../../store/idempotency-store.js';
import { equal, fail, ok, same, show } from '../check.js';
import {
  type AddCase,
  completed,
  DAY_MS,
  hex,
  indeterminate,
  inListOrder,
  keysOf,
  listAll,
  listOf,
  type OperatorCaseContext,
  sleep,
  truthOf,
} from './support.js';

/** One record in each state a listing tells apart, under one tenant. */
async function oneOfEach(c: OperatorCaseContext, tool: string): Promise<Record<string, RecordRef>> {
  const tenant = c.tenant();
  const ref = (): RecordRef => ({ tenant, key: hex(32) });
  const refs = {
    indeterminate: ref(),
    abandoned: ref(),
    expired: ref(),
    live: ref(),
    completed: ref(),
    other: ref(),
  };
  await indeterminate(c, refs.indeterminate, { tool });
  await c.acquire(refs.abandoned, { tool, leaseMs: c.leaseMs, maxAttempts: 1 });
  await c.acquire(refs.expired, { tool, leaseMs: c.leaseMs });
  await c.acquire(refs.live, { tool, leaseMs: 60_000 });
  await completed(c, refs.completed, { tool });
  await indeterminate(c, refs.other, { tool: `${tool}-other` });
  await sleep(c.expireMs);
  const lost = await c.store.claim(refs.abandoned, c.options({ tool, maxAttempts: 1 }));
  if (lost.status !== 'abandoned') fail(`a claim after the only attempt was lost: ${show(lost)}`);
  return refs;
}

export function addListingCases(add: AddCase<OperatorCaseContext>): void {
  add(
    'list: pages by an opaque cursor, oldest and newest first, each record once, as get reads it',
    async (c) => {
      const tenant = c.tenant();
      const refs: RecordRef[] = [];
      for (let index = 0; index < 7; index++) {
        const ref = { tenant, key: hex(32) };
        refs.push(ref);
        await indeterminate(c, ref, {
          runId: `run-${index}`,
          callId: `call-${index}`,
          description: `refund ${index}`,
        });
        if (index % 3 === 0) await sleep(3);
      }
      const truth = inListOrder(
        (await Promise.all(refs.map((ref) => truthOf(c.store, ref)))) as ListedRecord[],
      );
      for (const limit of [1, 3, 7, 100]) {
        const oldest = await listAll(c.store, { tenant, limit }, `oldest, limit ${limit}`);
        same(oldest, truth, `oldest first, limit ${limit}`);
        const newest = await listAll(c.store, { tenant, limit, order: 'newest' }, `newest, limit ${limit}`);
        same(newest, [...truth].reverse(), `newest first, limit ${limit}`);
      }
      const first = await listOf(c.store)({ tenant, limit: 7 });
      equal(first.cursor, undefined, 'the cursor of a page that holds the last record');
      const record = truth[0] as ListedRecord;
      ok(record.description?.startsWith('refund ') === true, `description kept: ${show(record)}`);
      ok(
        record.runId?.startsWith('run-') === true && record.callId?.startsWith('call-') === true,
        'run and call ids',
      );
    },
  );

  add(
    'list: states (default indeterminate, abandoned, lease_expired by the store clock), tool, olderThanMs',
    async (c) => {
      const tool = `refund-${hex(4)}`;
      const refs = await oneOfEach(c, tool);
      const tenant = refs.indeterminate?.tenant as string;
      const keys = async (states: ListState[] | undefined, extra: object = {}) =>
        new Set(
          keysOf(
            await listAll(
              c.store,
              { tenant, limit: 2, ...(states ? { states } : {}), ...extra },
              show(states),
            ),
          ),
        );
      const of = (...names: string[]) => new Set(names.map((name) => (refs[name] as RecordRef).key));
      same(await keys(undefined), of('indeterminate', 'abandoned', 'expired', 'other'), 'default states');
      same(await keys(['indeterminate']), of('indeterminate', 'other'), 'indeterminate');
      same(await keys(['abandoned']), of('abandoned'), 'abandoned');
      same(await keys(['lease_expired']), of('expired'), 'lease_expired');
      same(await keys(['in_progress']), of('expired', 'live'), 'in_progress (live or not)');
      same(await keys(['completed']), of('completed'), 'completed');
      same(await keys(undefined, { tool }), of('indeterminate', 'abandoned', 'expired'), 'tool');
      same(
        await keys(['completed', 'indeterminate'], { tool: `${tool}-other` }),
        of('other'),
        'tool and states',
      );
      same(
        await keys(undefined, { olderThanMs: 0 }),
        of('indeterminate', 'abandoned', 'expired', 'other'),
        'olderThanMs 0',
      );
      same(await keys(undefined, { olderThanMs: DAY_MS }), new Set(), 'olderThanMs one day');
      const page = await listOf(c.store)({ tenant, limit: 10, states: ['lease_expired'] });
      const expired = page.records[0];
      ok(
        expired !== undefined && expired.leaseExpiresAtMs <= page.nowMs,
        `lease_expired by nowMs ${show(page)}`,
      );
    },
  );

  add('list: never crosses tenants unless allTenants; allTenants sees every tenant', async (c) => {
    const tool = `tenants-${hex(4)}`;
    const a = c.ref();
    const b = c.ref();
    await indeterminate(c, a, { tool });
    await indeterminate(c, b, { tool });
    same(keysOf(await listAll(c.store, { tenant: a.tenant, limit: 10 }, 'tenant a')), [a.key], 'tenant a');
    same(keysOf(await listAll(c.store, { tenant: b.tenant, limit: 10 }, 'tenant b')), [b.key], 'tenant b');
    const all = await listAll(c.store, { allTenants: true, tool, limit: 1 }, 'all tenants');
    same(
      new Set(all.map((record) => `${record.tenant}/${record.key}`)),
      new Set([`${a.tenant}/${a.key}`, `${b.tenant}/${b.key}`]),
      'all tenants',
    );
  });

  add('list: a completed record is listed without its outcome; a released one is gone', async (c) => {
    const tenant = c.tenant();
    const done = { tenant, key: hex(32) };
    await completed(c, done);
    const released = { tenant, key: hex(32) };
    const { holder } = await c.acquire(released);
    await c.store.release(released, holder);
    const listed = await listAll(
      c.store,
      { tenant, limit: 10, states: ['completed', 'in_progress'] },
      'completed',
    );
    same(listed, [await truthOf(c.store, done)], 'the completed record, without its outcome');
  });

  add('list: a record past its retention drops out of the listing', async (c) => {
    const tenant = c.tenant();
    const short = { tenant, key: hex(32) };
    const kept = { tenant, key: hex(32) };
    const { holder } = await c.acquire(short, {
      mode: 'at-most-once',
      leaseMs: c.leaseMs,
      retentionMs: c.leaseMs,
    });
    await c.store.markIndeterminate(short, holder, { type: 'Timeout', message: 'm' }, c.leaseMs);
    await indeterminate(c, kept);
    await sleep(c.expireMs);
    same(
      keysOf(await listAll(c.store, { tenant, limit: 10 }, 'after retention')),
      [kept.key],
      'after retention',
    );
  });

  add(
    'list: paging while records are written meanwhile: every unchanged record once, no duplicates',
    async (c) => {
      const tenant = c.tenant();
      const stable: RecordRef[] = [];
      const settling: RecordRef[] = [];
      for (let index = 0; index < 12; index++) {
        const ref = { tenant, key: hex(32) };
        await indeterminate(c, ref);
        (index % 3 === 0 ? settling : stable).push(ref);
      }
      const writes = (async () => {
        for (let index = 0; index < 12; index++) {
          const on = c.racer(index);
          if (index < settling.length)
            await on.resolve(settling[index] as RecordRef, { outcome: '1' }, DAY_MS);
          const ref = { tenant, key: hex(32) };
          const { holder } = await c.acquire(ref, { mode: 'at-most-once' }, on);
          await on.markIndeterminate(ref, holder, { type: 'Timeout', message: 'm' }, DAY_MS);
        }
      })();
      const pages = (async () => {
        const seen: string[] = [];
        for (const order of ['oldest', 'newest'] as const) {
          const list = listOf(c.racer(1));
          let cursor: string | undefined;
          const keys: string[] = [];
          do {
            const page = await list({ tenant, limit: 2, order, ...(cursor === undefined ? {} : { cursor }) });
            keys.push(...keysOf(page.records));
            cursor = page.cursor;
            await sleep(1);
          } while (cursor !== undefined);
          equal(new Set(keys).size, keys.length, `${order}: a key listed twice in ${show(keys)}`);
          for (const ref of stable)
            ok(keys.includes(ref.key), `${order}: the unchanged record ${ref.key} was skipped`);
          seen.push(...keys);
        }
        return seen;
      })();
      await Promise.all([writes, pages]);
    },
  );
}
