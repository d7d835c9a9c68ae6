// Conformance cases of resolution records, of the operator fields of a record, of the listing
// index under the suite's races, and of the input `list` refuses.
import { StoreInputError } from '../../errors/store-input-error.js';
import type { ListState } from '../../store/idempotency-store.js';
import { MAX_DESCRIPTION_LENGTH, MAX_LIST_LIMIT, MAX_REASON_LENGTH } from '../../store/store-input.js';
import { equal, fields, ok, rejects, same, show } from '../check.js';
import {
  type AddCase,
  DAY_MS,
  hex,
  indeterminate,
  inListOrder,
  listAll,
  listOf,
  type OperatorCaseContext,
  resolutionsOf,
  truthOf,
} from './support.js';

const ALL_STATES: ListState[] = ['indeterminate', 'abandoned', 'lease_expired', 'in_progress', 'completed'];

export function addResolutionCases(add: AddCase<OperatorCaseContext>): void {
  add('resolutions: who and why are kept, also after a released resolution deleted the record', async (c) => {
    const ref = c.ref();
    const first = await indeterminate(c, ref);
    const audit = { by: 'oncall@example.com', reason: 'the provider has no such refund' };
    same(await c.store.resolve(ref, { released: true, ...audit }, DAY_MS), { status: 'resolved' }, 'release');
    equal(await c.store.get(ref), null, 'the released record');
    const afterRelease = await resolutionsOf(c.store)(ref);
    equal(afterRelease.length, 1, `entries after release ${show(afterRelease)}`);
    fields(
      afterRelease[0],
      {
        key: ref.key,
        tenant: ref.tenant,
        tool: 'refund',
        action: 'released',
        fromState: 'indeterminate',
        fence: first.fence,
        attempt: 1,
        error: { type: 'Timeout', message: 'no answer' },
        ...audit,
      },
      'the released entry',
    );
    ok(Number.isSafeInteger(afterRelease[0]?.atMs), 'atMs');
    await indeterminate(c, ref);
    const stated = { by: 'lead', reason: 'seen in the ledger' };
    same(
      await c.store.resolve(ref, { outcome: '{"refundId":"r-1"}', ...stated }, DAY_MS),
      { status: 'resolved' },
      'complete',
    );
    const entries = await resolutionsOf(c.store)(ref);
    same(
      entries.map((entry) => entry.action),
      ['completed', 'released'],
      'newest first',
    );
    const record = await c.store.get(ref);
    fields(record, { state: 'completed', outcome: '{"refundId":"r-1"}' }, 'the resolved record');
    same(record?.resolution, entries[0], 'the record holds its resolution entry');
    ok(!('outcome' in (entries[0] as object)), 'an entry never holds the outcome');
    same(await resolutionsOf(c.store)(c.ref()), [], 'a key never resolved');
    equal(await c.store.forget({ tenant: ref.tenant }), 1, 'forget');
    same(await resolutionsOf(c.store)(ref), [], 'after forget');
  });

  add(
    'a record tells an operator its run, call, description, and when it was claimed and settled',
    async (c) => {
      const ref = c.ref();
      const { result, holder } = await c.acquire(ref, {
        runId: 'run-7',
        callId: 'call-7',
        description: 'refund A-100 EUR 30',
        leaseMs: 10_000,
      });
      const claimed = await c.store.get(ref);
      fields(claimed, { runId: 'run-7', callId: 'call-7', description: 'refund A-100 EUR 30' }, 'claimed');
      const claimedAtMs = claimed?.claimedAtMs as number;
      ok(
        Math.abs(claimedAtMs + 10_000 - result.leaseExpiresAtMs) <= 1,
        `claimedAtMs ${claimedAtMs} vs lease ${result.leaseExpiresAtMs}`,
      );
      equal(claimed?.updatedAtMs, claimedAtMs, 'updatedAtMs of a claim');
      await c.store.markIndeterminate(ref, holder, { type: 'Timeout', message: 'm' }, DAY_MS);
      const marked = await c.store.get(ref);
      equal(marked?.claimedAtMs, claimedAtMs, 'claimedAtMs after settling');
      ok((marked?.updatedAtMs ?? 0) >= claimedAtMs, `updatedAtMs after settling ${show(marked)}`);
      const plain = c.ref();
      await c.acquire(plain);
      const bare = await c.store.get(plain);
      ok(
        !('runId' in (bare as object)) &&
          !('callId' in (bare as object)) &&
          !('description' in (bare as object)),
        `no ids given: ${show(bare)}`,
      );
    },
  );

  add(
    'the listing index equals what get reads after racing claims, completes, releases, resolves and forget',
    async (c) => {
      const tenant = c.tenant();
      const refs = Array.from({ length: 12 }, () => ({ tenant, key: hex(32) }));
      await Promise.all(
        refs.map(async (ref, index) => {
          const on = c.racer(index);
          const mode = index % 2 === 0 ? 'at-most-once' : 'at-least-once';
          const opts = Array.from({ length: 4 }, () => c.options({ mode, leaseMs: c.leaseMs }));
          const claims = await Promise.all(opts.map((o, r) => c.racer(index + r).claim(ref, o)));
          const winner = claims.findIndex((claim) => claim.status === 'acquired');
          const won = claims[winner];
          if (won?.status !== 'acquired') return;
          const current = { fence: won.fence, owner: (opts[winner] as { owner: string }).owner };
          const other = c.racer(index + 1);
          const step = index % 4;
          if (step === 0) {
            await Promise.all([on.complete(ref, current, '1', DAY_MS), other.release(ref, current)]);
          } else if (step === 1) {
            await Promise.all([
              on.markIndeterminate(ref, current, { type: 'E', message: 'm' }, DAY_MS),
              other.complete(ref, current, '2', DAY_MS),
            ]);
          } else if (step === 2) {
            await on.markIndeterminate(ref, current, { type: 'E', message: 'm' }, DAY_MS);
            await Promise.all([
              on.resolve(ref, { released: true }, DAY_MS),
              other.resolve(ref, { outcome: '3' }, DAY_MS),
            ]);
          }
        }),
      );
      const truth = (await Promise.all(refs.map((ref) => truthOf(c.store, ref)))).filter(
        (record) => record !== null,
      );
      const listed = await listAll(c.store, { tenant, states: ALL_STATES, limit: 5 }, 'after the races');
      same(listed, inListOrder(truth), 'the listing vs get');
      const doomed = c.tenant();
      await Promise.all([
        ...Array.from({ length: 6 }, (_, index) =>
          c.racer(index).claim({ tenant: doomed, key: hex(32) }, c.options()),
        ),
        c.racer(1).forget({ tenant: doomed }),
      ]);
      const left = await listAll(c.store, { tenant: doomed, states: ALL_STATES, limit: 10 }, 'after forget');
      const leftTruth = await Promise.all(left.map((record) => truthOf(c.store, record)));
      same(left, leftTruth, 'every record listed after a racing forget is one get reads');
      await c.store.forget({ tenant: doomed });
      same(
        await listAll(c.store, { tenant: doomed, states: ALL_STATES, limit: 10 }, 'forgotten'),
        [],
        'after a second forget',
      );
    },
    60_000,
  );

  add(
    'list, resolve and claim refuse bad operator input with StoreInputError, changing nothing',
    async (c) => {
      const ref = c.ref();
      await indeterminate(c, ref);
      const list = listOf(c.store);
      const tenant = ref.tenant;
      const newest = (await list({ tenant, limit: 1, order: 'newest' })).cursor;
      const bad: [string, object][] = [
        ['no limit', { tenant }],
        ['limit 0', { tenant, limit: 0 }],
        [`limit ${MAX_LIST_LIMIT + 1}`, { tenant, limit: MAX_LIST_LIMIT + 1 }],
        ['limit 1.5', { tenant, limit: 1.5 }],
        ['no tenant', { limit: 1 }],
        ['tenant with allTenants', { tenant, allTenants: true, limit: 1 }],
        ['empty states', { tenant, states: [], limit: 1 }],
        ['unknown state', { tenant, states: ['running'], limit: 1 }],
        ['olderThanMs -1', { tenant, olderThanMs: -1, limit: 1 }],
        ['order', { tenant, order: 'random', limit: 1 }],
        ['garbage cursor', { tenant, limit: 1, cursor: 'not-a-cursor' }],
        ['empty tenant', { tenant: '', limit: 1 }],
      ];
      if (newest !== undefined)
        bad.push(['a newest cursor for oldest', { tenant, limit: 1, cursor: newest }]);
      for (const [what, options] of bad) {
        await rejects(
          () => list(options as never),
          (error) => StoreInputError.isInstance(error),
          `list with ${what}`,
        );
      }
      const before = await c.store.get(ref);
      for (const audit of [
        { by: '' },
        { by: 'x'.repeat(257) },
        { reason: 'r'.repeat(MAX_REASON_LENGTH + 1) },
        { reason: 'a\u0000b' },
      ]) {
        await rejects(
          () => c.store.resolve(ref, { released: true, ...audit }, DAY_MS),
          (error) => StoreInputError.isInstance(error),
          `resolve with ${show(audit)}`,
        );
      }
      same(await c.store.get(ref), before, 'the record after refused resolutions');
      same(await resolutionsOf(c.store)(ref), [], 'no entry after refused resolutions');
      const fresh = c.ref();
      for (const extra of [
        { description: 'd'.repeat(MAX_DESCRIPTION_LENGTH + 1) },
        { runId: '' },
        { callId: 'c'.repeat(1025) },
      ]) {
        await rejects(
          () => c.store.claim(fresh, c.options(extra)),
          (error) => StoreInputError.isInstance(error),
          `claim with ${show(Object.keys(extra))}`,
        );
      }
      equal(await c.store.get(fresh), null, 'nothing claimed');
    },
  );
}
