// The operator's commands against one real store, as a person runs them: the CLI is a child
// process; the application side is a Guard in this process on the same store.
import { Guard, Idempotency, type IdempotencyPolicy, type IdempotencyStore } from '@toolfence/core';
import { expect } from 'vitest';
import { runCli } from '../../../test/support/run-cli.js';

type Refund = { orderId: string; amount: number };
const refundPolicy: IdempotencyPolicy<Refund> = {
  kind: Idempotency.EFFECTFUL,
  describe: (args) => `refund ${args.orderId} EUR ${args.amount}`,
};

/** Runs the whole operator scenario; `storeArgs` point the CLI at the same store as `store`. */
export async function operatorScenario(store: IdempotencyStore, storeArgs: readonly string[]): Promise<void> {
  const tenant = `acme-${Math.random().toString(16).slice(2, 10)}`;
  const guard = new Guard({ store, tenant });
  const cli = (args: readonly string[], input?: string) =>
    runCli([...storeArgs, '--tenant', tenant, ...args], input === undefined ? {} : { input });
  let paid = 0;
  const refund = (args: Refund, fail: boolean) =>
    guard.run(
      {
        tool: 'refund',
        arguments: args,
        runId: 'run-7',
        callId: `call-${args.orderId}`,
        policy: refundPolicy as unknown as IdempotencyPolicy,
      },
      async () => {
        if (fail) throw new Error('gateway timeout');
        paid += 1;
        return { refundId: `r-${args.orderId}` };
      },
    );
  const keyOf = async (args: Refund) =>
    refund(args, true).then(
      () => expect.unreachable('should be indeterminate'),
      (error: { key: string }) => error.key,
    );
  const first = await keyOf({ orderId: 'A-100', amount: 30 });
  const second = await keyOf({ orderId: 'A-200', amount: 45 });
  await refund({ orderId: 'A-300', amount: 5 }, false);

  const listed = await cli(['list', '--json']);
  expect(listed.code, listed.stderr).toBe(0);
  expect(listed.records.map((line) => line.key).sort()).toEqual([first, second].sort());
  expect(listed.page).toMatchObject({ records: 2, more: false, tenant });
  for (const line of listed.records) {
    expect(line).toMatchObject({
      state: 'indeterminate',
      listedState: 'indeterminate',
      tool: 'refund',
      runId: 'run-7',
      tenant,
    });
    expect(line).not.toHaveProperty('outcome');
  }
  const readable = await cli(['list']);
  expect(readable.code).toBe(0);
  expect(readable.stdout).toMatch(/^STATE\s+IN_STATE\s+SINCE_CLAIM\s+TOOL\s+KEY/);
  expect(readable.stdout).toContain('refund A-100 EUR 30');
  expect(readable.stdout).toContain(first);
  const completedOnly = await cli(['list', '--state', 'completed', '--json']);
  expect(completedOnly.records).toHaveLength(1);
  expect(completedOnly.records[0]).not.toHaveProperty('outcome');

  const inspected = await cli(['inspect', first]);
  expect(inspected.code).toBe(0);
  expect(inspected.stdout).toContain('state     indeterminate');
  // Issue 30, item 6: the type, never the message, unless the app's describeError gives one.
  expect(inspected.stdout).toContain('error     Error: (message not recorded)');
  expect(inspected.stdout).not.toContain('gateway timeout');
  expect((await cli(['inspect', '0'.repeat(64)])).code).toBe(1);

  const resolved = await cli([
    'resolve',
    first,
    '--outcome',
    '{"refundId":"r-verified"}',
    '--by',
    'ana@example.com',
    '--reason',
    'seen in the ledger',
    '--json',
  ]);
  expect(resolved.code, resolved.stderr).toBe(0);
  expect(resolved.json[0]).toMatchObject({
    status: 'resolved',
    event: {
      type: 'tool.resolved',
      key: first,
      tool: 'refund',
      resolution: { action: 'completed', by: 'ana@example.com', reason: 'seen in the ledger' },
    },
  });
  expect(await refund({ orderId: 'A-100', amount: 30 }, false)).toEqual({ refundId: 'r-verified' });
  const again = await cli(['resolve', first, '--outcome', '1']);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('not resolvable: the record is completed');

  const released = await cli([
    'release',
    second,
    '--by',
    'ana@example.com',
    '--reason',
    'the provider has no such refund',
  ]);
  expect(released.code, released.stderr).toBe(0);
  expect(released.stdout).toContain('released');
  const history = await cli(['inspect', second, '--json']);
  expect(history.code).toBe(0);
  expect(history.json[0]).toMatchObject({
    record: null,
    resolutions: [
      {
        action: 'released',
        fromState: 'indeterminate',
        by: 'ana@example.com',
        reason: 'the provider has no such refund',
      },
    ],
  });
  const paidBefore = paid;
  expect(await refund({ orderId: 'A-200', amount: 45 }, false)).toEqual({ refundId: 'r-A-200' });
  expect(paid).toBe(paidBefore + 1);
  expect((await cli(['release', second])).code).toBe(1);

  const stats = await cli(['stats', '--json']);
  expect(stats.code).toBe(0);
  expect(stats.json).toEqual([{ state: 'completed', tool: 'refund', count: 3 }]);

  const refused = await cli(['forget'], 'not-the-tenant\n');
  expect(refused.code).toBe(2);
  expect((await store.list({ tenant, states: ['completed'], limit: 10 })).records).toHaveLength(3);
  const forgotten = await cli(['forget'], `${tenant}\n`);
  expect(forgotten.code, forgotten.stderr).toBe(0);
  expect(forgotten.stdout).toContain('erased 3 record(s)');
  expect((await store.list({ tenant, states: ['completed'], limit: 10 })).records).toEqual([]);
}
