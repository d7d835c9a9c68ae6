// A stale action form is refused by the store's own condition, not only by the console's version
// check: the record is re-lived (released by another operator, the call stopped again: a new life
// at fence 1) AFTER the version check passed and after the guard's read, so only the store's
// atomic `resolution.expect` check stands between the operator's decision and the new call.
import { createServer } from 'node:http';
import { createConsoleHandler } from '@toolfence/console';
import {
  Guard,
  type IdempotencyRecord,
  MemoryStore,
  type RecordRef,
  type Resolution,
  type ResolveResult,
} from '@toolfence/core';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  authorizeByHeader,
  ConsoleClient,
  close,
  formFields,
  listen,
  recordPath,
  stopCall,
} from '../../../test/support/console.js';

const BASE = '/console';
const refundA = { tool: 'refund', tenant: 'tenant-a', runId: 'run-a', arguments: { order: 'A-100' } };

/** A MemoryStore that runs `step` after its `afterGets`-th next `get` answered, and logs resolves. */
class SteppedStore extends MemoryStore {
  step: { afterGets: number; run: () => Promise<void> } | undefined;
  readonly resolves: { resolution: Resolution; result: ResolveResult }[] = [];
  override async get(ref: RecordRef): Promise<IdempotencyRecord | null> {
    const record = await super.get(ref);
    const step = this.step;
    if (step !== undefined && --step.afterGets === 0) {
      this.step = undefined;
      await step.run();
    }
    return record;
  }
  override async resolve(
    ref: RecordRef,
    resolution: Resolution,
    retentionMs: number,
  ): Promise<ResolveResult> {
    const result = await super.resolve(ref, resolution, retentionMs);
    this.resolves.push({ resolution, result });
    return result;
  }
}

let store: SteppedStore;
let guard: Guard;
let server: ReturnType<typeof createServer>;
let origin: string;

beforeEach(async () => {
  store = new SteppedStore();
  guard = new Guard({
    store,
    tenant: 'tenant-a',
    describeError: (error: unknown) => ({ message: (error as Error).message }),
  });
  const handler = createConsoleHandler({ store, guard, authorize: authorizeByHeader, basePath: BASE });
  server = createServer((request, response) => void handler(request, response));
  origin = await listen(server);
});

afterEach(async () => {
  await close(server);
});

// afterGets 1: re-lived between the version check and the guard's read (the guard refuses on the
// form's holder, never writing); 2: after the guard's read too (the store's condition refuses).
it.each([
  { afterGets: 1, refusedBy: 'the guard', storeAnswers: [] },
  { afterGets: 2, refusedBy: 'the store', storeAnswers: ['changed'] },
])(
  'a form re-lived after the version check is refused by $refusedBy (409), the new call untouched',
  async ({ afterGets, storeAnswers }) => {
    const key = await stopCall(guard, refundA, 'timed out');
    const ref = { tenant: 'tenant-a', key };
    const seen = (await store.get(ref)) as IdempotencyRecord;
    const alice = new ConsoleClient(origin, 'alice');
    const recordFields = formFields((await alice.get(recordPath(BASE, 'tenant-a', key))).text, '/confirm');
    expect(recordFields).toMatchObject({ fence: String(seen.fence), owner: seen.owner });
    const confirm = await alice.post(`${BASE}/confirm`, {
      ...recordFields,
      action: 'complete',
      outcome: '{"refundId":"re_old"}',
      reason: 'seen at the provider',
    });
    expect(confirm.status).toBe(200);
    const resolveFields = formFields(confirm.text, '/resolve');
    expect(resolveFields).toMatchObject({ fence: String(seen.fence), owner: seen.owner });

    // The 1st get is the console's version check, the 2nd the guard's read.
    store.step = {
      afterGets,
      run: async () => {
        await store.resolve(
          ref,
          { released: true, by: 'bob', expect: { fence: seen.fence, owner: seen.owner } },
          86_400_000,
        );
        await stopCall(guard, refundA, 'timed out again');
      },
    };
    const stale = await alice.post(`${BASE}/resolve`, resolveFields);
    expect(store.step).toBeUndefined();
    expect(stale.status).toBe(409);
    expect(stale.text).toContain('The record changed since you opened it');
    const now = (await store.get(ref)) as IdempotencyRecord;
    expect(now).toMatchObject({ state: 'indeterminate', fence: 1, error: { message: 'timed out again' } });
    expect(now.owner).not.toBe(seen.owner);
    expect(store.resolves.map(({ resolution, result }) => [resolution.by, result.status])).toEqual([
      ['bob', 'resolved'],
      ...storeAnswers.map((answer) => ['alice@example.com', answer]),
    ]);
    for (const { resolution } of store.resolves)
      expect(resolution.expect).toEqual({ fence: seen.fence, owner: seen.owner });
    expect((await guard.resolutions(key)).map((entry) => entry.by)).toEqual(['bob']);
    // The page shown is the new record's, with forms for it.
    expect(formFields(stale.text, '/confirm')).toMatchObject({ fence: '1', owner: now.owner });
  },
);

it('a form without its holder fields (or with a malformed fence) is asked to be reviewed, nothing changed', async () => {
  const key = await stopCall(guard, refundA, 'timed out');
  const alice = new ConsoleClient(origin, 'alice');
  const fields = formFields((await alice.get(recordPath(BASE, 'tenant-a', key))).text, '/confirm');
  const { fence: _fence, owner: _owner, ...withoutHolder } = fields;
  for (const posted of [withoutHolder, { ...fields, fence: '0' }, { ...fields, fence: '1e0' }]) {
    const answer = await alice.post(`${BASE}/confirm`, { ...posted, action: 'release', reason: 'no refund' });
    expect(answer.status).toBe(409);
    expect(answer.text).toContain('The record changed since you opened it');
  }
  expect(store.resolves).toEqual([]);
  expect((await store.get({ tenant: 'tenant-a', key }))?.state).toBe('indeterminate');
});
