// Conformance cases: what becomes of a record (release, retention, tenants and forget,
// markIndeterminate and resolve, conflicts of tool and fingerprint).
import { equal, fail, fields, same, show } from '../check.js';
import { type CaseDefinition, DAY_MS, defineCase, hex, sleep, whileWithin } from './case-context.js';

export const recordCases: readonly CaseDefinition[] = [
  defineCase('release frees the key; a stale or missing release is reported', async (c) => {
    const ref = c.ref();
    const first = await c.acquire(ref);
    equal((await c.store.release(ref, { fence: 1, owner: 'someone-else' })).status, 'stale', 'other owner');
    same(await c.store.release(ref, first.holder), { status: 'released' }, 'release');
    equal(await c.store.get(ref), null, 'get after release');
    same(await c.store.release(ref, first.holder), { status: 'not_found' }, 'release again');
    const again = await c.acquire(ref);
    fields(again.result, { fence: 1, attempt: 1, takeover: false }, 'a new life');
    await c.store.complete(ref, again.holder, '1', DAY_MS);
    equal((await c.store.release(ref, again.holder)).status, 'stale', 'release of a completed record');
    fields(await c.store.get(ref), { state: 'completed' }, 'get');
  }),

  defineCase('a record is gone after its retention window and the key is free again', async (c) => {
    const ref = c.ref();
    const retentionMs = c.leaseMs * 2;
    const { holder } = await c.acquire(ref, { leaseMs: c.leaseMs, retentionMs });
    const sentAtMs = performance.now();
    await c.store.complete(ref, holder, '"kept"', retentionMs);
    await whileWithin(sentAtMs, retentionMs, async () => {
      equal((await c.store.claim(ref, c.options())).status, 'completed', 'within retention');
    });
    await sleep(retentionMs + c.expireMs - c.leaseMs);
    equal(await c.store.get(ref), null, 'get after retention');
    fields((await c.acquire(ref)).result, { fence: 1, attempt: 1, takeover: false }, 'claim after retention');
  }),

  defineCase('tenants are isolated and forget erases only one tenant', async (c) => {
    const key = hex(32);
    const a = { tenant: c.tenant(), key };
    const b = { tenant: c.tenant(), key };
    const ha = await c.acquire(a);
    const hb = await c.acquire(b);
    await c.store.complete(a, ha.holder, '"a"', DAY_MS);
    await c.store.complete(b, hb.holder, '"b"', DAY_MS);
    const other = { tenant: a.tenant, key: hex(32) };
    await c.acquire(other);
    fields(await c.store.get(a), { outcome: '"a"' }, 'a');
    fields(await c.store.get(b), { outcome: '"b"' }, 'b');
    equal(await c.store.forget({ tenant: a.tenant }), 2, 'forget a');
    equal(await c.store.get(a), null, 'a after forget');
    equal(await c.store.get(other), null, 'other key of a after forget');
    fields(await c.store.get(b), { outcome: '"b"' }, 'b after forget of a');
    equal(await c.store.forget({ tenant: a.tenant }), 0, 'forget a again');
  }),

  defineCase('forget treats a tenant name literally (no glob, prefix or separator injection)', async (c) => {
    const base = c.tenant();
    const victims = [`${base}-x`, `${base}:y`, `${base}}z`, `${base}x`];
    c.tenants.push(...victims);
    for (const tenant of victims) {
      const ref = { tenant, key: hex(32) };
      const { holder } = await c.acquire(ref);
      await c.store.complete(ref, holder, '1', DAY_MS);
    }
    for (const pattern of [`${base}*`, `${base}?x`, `${base}[-:]y`, `${base}%`, `${base}_x`, base]) {
      equal(await c.store.forget({ tenant: pattern }), 0, `forget ${show(pattern)}`);
    }
    for (const tenant of victims) equal(await c.store.forget({ tenant }), 1, `forget ${show(tenant)}`);
  }),

  defineCase('markIndeterminate keeps the claim; resolve settles it as completed or released', async (c) => {
    const ref = c.ref();
    const { holder } = await c.acquire(ref, { mode: 'at-most-once' });
    const marked = await c.store.markIndeterminate(
      ref,
      holder,
      { type: 'ECONNRESET', message: 'socket hang up' },
      DAY_MS,
    );
    same(marked, { status: 'marked' }, 'mark');
    const claim = await c.store.claim(ref, c.options({ mode: 'at-most-once' }));
    if (claim.status !== 'indeterminate') fail(`expected indeterminate, got ${show(claim)}`);
    same(claim.record.error, { type: 'ECONNRESET', message: 'socket hang up' }, 'recorded error');
    equal(
      (await c.store.markIndeterminate(ref, holder, { type: 'X', message: 'y' }, DAY_MS)).status,
      'stale',
      'mark again',
    );
    same(await c.store.resolve(ref, { outcome: '"verified"' }, DAY_MS), { status: 'resolved' }, 'resolve');
    const replay = await c.store.claim(ref, c.options({ mode: 'at-most-once' }));
    if (replay.status !== 'completed') fail(`expected completed, got ${show(replay)}`);
    equal(replay.record.outcome, '"verified"', 'resolved outcome');
    equal(
      (await c.store.resolve(ref, { released: true }, DAY_MS)).status,
      'not_resolvable',
      'resolve completed',
    );

    const other = c.ref();
    const second = await c.acquire(other, { mode: 'at-most-once' });
    equal(
      (await c.store.resolve(other, { released: true }, DAY_MS)).status,
      'holder_alive',
      'resolve in_progress',
    );
    equal(
      (await c.store.resolve(other, { outcome: '"forced"' }, DAY_MS)).status,
      'holder_alive',
      'resolve in_progress with an outcome',
    );
    fields(
      await c.store.get(other),
      { state: 'in_progress', owner: second.opts.owner },
      'live record untouched',
    );
    await c.store.markIndeterminate(other, second.holder, { type: 'Timeout', message: 't' }, DAY_MS);
    same(await c.store.resolve(other, { released: true }, DAY_MS), { status: 'resolved' }, 'release');
    equal(await c.store.get(other), null, 'get after resolve released');
    equal((await c.store.claim(other, c.options())).status, 'acquired', 'claim after resolve released');
    same(await c.store.resolve(c.ref(), { released: true }, DAY_MS), { status: 'not_found' }, 'missing');
  }),

  defineCase('an abandoned record can be resolved', async (c) => {
    const ref = c.ref();
    await c.acquire(ref, { leaseMs: c.leaseMs, maxAttempts: 1 });
    await sleep(c.expireMs);
    equal((await c.store.claim(ref, c.options({ maxAttempts: 1 }))).status, 'abandoned', 'claim');
    same(await c.store.resolve(ref, { released: true }, DAY_MS), { status: 'resolved' }, 'resolve');
    equal((await c.store.claim(ref, c.options())).status, 'acquired', 'claim after');
  }),

  defineCase(
    'another tool, or another fingerprint when checked, is a conflict before any state',
    async (c) => {
      const ref = c.ref();
      await c.acquire(ref, { checkFingerprint: true, fingerprint: 'a'.repeat(64) });
      const otherArgs = await c.store.claim(
        ref,
        c.options({ checkFingerprint: true, fingerprint: 'b'.repeat(64) }),
      );
      if (otherArgs.status !== 'conflict') fail(`other arguments: expected conflict, got ${show(otherArgs)}`);
      equal(otherArgs.record.fingerprint, 'a'.repeat(64), 'conflict.record.fingerprint');
      const otherTool = await c.store.claim(ref, c.options({ tool: 'email', fingerprint: 'a'.repeat(64) }));
      if (otherTool.status !== 'conflict') fail(`other tool: expected conflict, got ${show(otherTool)}`);
      equal(otherTool.record.tool, 'refund', 'conflict.record.tool');
      const sameArgs = await c.store.claim(
        ref,
        c.options({ checkFingerprint: true, fingerprint: 'a'.repeat(64) }),
      );
      equal(sameArgs.status, 'busy', 'same arguments');
      equal(
        (await c.store.claim(ref, c.options({ fingerprint: 'b'.repeat(64) }))).status,
        'busy',
        'unchecked',
      );
    },
  ),
];
