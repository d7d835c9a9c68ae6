// What the columns measure, and what was left out: IN_STATE is the time since the record entered
// its state (here: marked indeterminate 10 minutes ago), SINCE_CLAIM the time since its attempt
// claimed the key (3 hours ago); `list --json --limit N` ends with a page line that says whether
// more records exist and gives the cursor `--cursor` goes on from.
import type { Clock } from '@toolfence/core';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions, DAY_MS } from '../../../test/support/claims.js';
import { runCli } from '../../../test/support/run-cli.js';
import { sqliteDirectory } from '../../../test/support/sqlite.js';

const directory = sqliteDirectory('cli-columns');
const file = directory.file('records.db');
const tenant = 'shop';
const keys = ['1'.repeat(64), '2'.repeat(64), '3'.repeat(64)];

beforeAll(async () => {
  let nowMs = Date.now() - 3 * 3_600_000;
  const clock: Clock = { now: () => nowMs };
  const store = new SQLiteStore({ path: file, clock });
  await store.ensureSchema();
  for (const key of keys) {
    nowMs = Date.now() - 3 * 3_600_000;
    const options = claimOptions({ mode: 'at-most-once', leaseMs: 4 * 3_600_000 });
    const claim = await store.claim({ tenant, key }, options);
    if (claim.status !== 'acquired') throw new Error(claim.status);
    nowMs = Date.now() - 10 * 60_000;
    await store.markIndeterminate(
      { tenant, key },
      { fence: claim.fence, owner: options.owner },
      { type: 'Error', message: 'socket hang up' },
      DAY_MS,
    );
  }
  await store.close();
});
afterAll(() => directory.remove());

const cli = (args: readonly string[]) => runCli(['--store', `sqlite:${file}`, '--tenant', tenant, ...args]);

describe('list columns and pages', () => {
  it('IN_STATE is the time in the current state, SINCE_CLAIM the time since the claim', async () => {
    const run = await cli(['list']);
    expect(run.code, run.stderr).toBe(0);
    const [header, ...rows] = run.stdout.trimEnd().split('\n');
    expect(header).toMatch(
      /^STATE\s+IN_STATE\s+SINCE_CLAIM\s+TOOL\s+KEY\s+ATTEMPT\s+RUN\s+DESCRIPTION\s+ERROR$/,
    );
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row).toMatch(/^indeterminate\s+10m(?: \d+s)?\s+3h(?: \d+[ms])?\s+refund\s+/);
    }
  }, 30_000);

  it('--json --limit N says that more exist and where to go on; --cursor goes on', async () => {
    const first = await cli(['list', '--json', '--limit', '2']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.records).toHaveLength(2);
    expect(first.page).toMatchObject({
      records: 2,
      more: true,
      tenant,
      namespace: { table: 'toolfence_records' },
    });
    const cursor = first.page?.cursor as string;
    expect(typeof cursor).toBe('string');
    const rest = await cli(['list', '--json', '--limit', '2', '--cursor', cursor]);
    expect(rest.code, rest.stderr).toBe(0);
    expect(rest.page).toMatchObject({ records: 1, more: false });
    expect(rest.page).not.toHaveProperty('cursor');
    expect([...first.records, ...rest.records].map((record) => record.key).sort()).toEqual(keys);
    const table = await cli(['list', '--limit', '2']);
    expect(table.stderr).toContain(
      `(first 2 shown; raise --limit for more, or go on with --cursor ${cursor})`,
    );
    const all = await cli(['list', '--json']);
    expect(all.page).toMatchObject({ records: 3, more: false });
  }, 30_000);
});
