// The CLI's listing and inspect on records in the approval states (issue 35, part 2): they show,
// and the operator's words (by, reason) and the request's fields are escaped like every field.
import { Guard, Idempotency, MemoryStore } from '@toolfence/core';
import { expect, it } from 'vitest';
import { inspectLines, listRows } from './output.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const UNSAFE = /[\u0000-\u001f\u202e]/;

it('lists and inspects awaiting, approved and denied records, with operator text escaped', async () => {
  const store = new MemoryStore();
  const guard = new Guard({ store, tenant: 'acme' });
  const policy = { kind: Idempotency.EFFECTFUL, approval: 'required' } as const;
  const call = (orderId: string) => ({
    tool: 'refund',
    arguments: { orderId },
    runId: 'run\u001b[31m',
    policy,
  });
  await guard.run(call('A-1'), async () => 1).catch(() => undefined);
  await guard.approve(call('A-2'), { by: 'ops', reason: 'ok\u202e\nforged line' });
  await guard.deny(call('A-3'), { by: 'ops\u0007', reason: 'fraud' });
  const page = await guard.list({ states: ['awaiting_approval', 'approved', 'denied'] });
  const rows = listRows(page.records, page.nowMs, false);
  expect(rows.map((row) => row[0]).sort()).toEqual(['approved', 'awaiting_approval', 'denied']);
  for (const row of rows) {
    expect(row.join(' ')).not.toMatch(UNSAFE);
    expect(row[6]).toBe('run\\x1b[31m');
  }
  const approved = page.records.find((record) => record.state === 'approved');
  const denied = page.records.find((record) => record.state === 'denied');
  const place = { store: 'memory', namespace: '-', tenant: 'acme' };
  const approvedLines = inspectLines(
    approved?.key ?? '',
    place,
    await guard.inspect(approved?.key ?? ''),
    [],
  );
  const approvalLine = approvedLines.find((line) => line.startsWith('approval'));
  expect(approvalLine).toMatch(/^approval {2}approved by ops at \d{4}-.*: ok\\u\{202e\}\\nforged line$/);
  const deniedLines = inspectLines(denied?.key ?? '', place, await guard.inspect(denied?.key ?? ''), []);
  expect(deniedLines.find((line) => line.startsWith('approval'))).toMatch(
    /^approval {2}denied by ops\\x07 at /,
  );
  for (const line of deniedLines) expect(line).not.toMatch(UNSAFE);
});
