// `toolfence approvals`, `approve` and `deny` as a real process (approval-process.ts: a MemoryStore,
// the application asking on it, and the CLI on the same store): the listing, the decision on the
// request the operator read, single use, a changed request refused with nothing written, and a
// store that keeps no approvals refused with a clear error.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { IdempotencyStore } from '@toolfence/core';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../test/support/run-cli.js';
import { sqliteDirectory } from '../../../test/support/sqlite.js';

const script = fileURLToPath(new URL('./approval-process.ts', import.meta.url));

type Line = Record<string, unknown> & { code?: number; stdout?: string; stderr?: string };

function run(steps: readonly unknown[]): Promise<Line[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--conditions=@toolfence/source', script, JSON.stringify(steps)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`approval-process exited ${code}: ${err}`));
      resolve(
        out
          .split('\n')
          .filter((line) => line !== '')
          .map((line) => JSON.parse(line) as Line),
      );
    });
  });
}

const ask = (as: 'a' | 'b', amount = 30) => ({ ask: { as, amount } });
const cli = (...args: string[]) => ({ cli: args });
const jsonOf = (line: Line | undefined) =>
  (line?.stdout ?? '')
    .split('\n')
    .filter((text) => text.startsWith('{'))
    .map((text) => JSON.parse(text) as Record<string, unknown>);

describe('toolfence approvals / approve / deny', () => {
  it('lists the waiting call, approves it once, and inspect shows who approved it', async () => {
    const [asked, listed, table, noBy, approved, shown, first, second, used, late] = await run([
      ask('a'),
      cli('approvals', '--json'),
      cli('approvals'),
      cli('approve', '$KEY'),
      cli('approve', '$KEY', '--by', 'ana@example.com', '--reason', 'customer confirmed by phone'),
      cli('inspect', '$KEY'),
      ask('b'),
      ask('a'),
      cli('inspect', '$KEY'),
      cli('deny', '$KEY', '--by', 'bo'),
    ]);
    expect(asked).toEqual({ ask: 'APPROVAL_REQUIRED', runs: 0 });
    const rows = jsonOf(listed);
    expect(listed?.code).toBe(0);
    expect(rows[0]).toMatchObject({
      state: 'awaiting_approval',
      tool: 'refund',
      description: 'refund A-1 EUR 30',
      runId: 'run-1',
      fence: 0,
    });
    expect(rows[1]).toMatchObject({ page: { records: 1, more: false, tenant: 'acme' } });
    const owner = rows[0]?.owner as string;
    expect(table?.stdout).toMatch(/^STATE\s+IN_STATE/);
    expect(table?.stdout).toContain(`awaiting_approval`);
    expect(table?.stdout).toContain(`decide with approve or deny (--owner ${owner})`);

    expect(noBy).toMatchObject({ code: 2, stdout: '' });
    expect(noBy?.stderr).toContain('approve needs --by NAME');

    expect(approved?.code, approved?.stderr).toBe(0);
    expect(approved?.stdout).toContain('approved by ana@example.com at ');
    expect(approved?.stdout).toContain('(customer confirmed by phone): the call runs once');
    expect(shown?.stdout).toContain('state     approved');
    expect(shown?.stdout).toMatch(
      /approval {2}approved by ana@example\.com at \S+: customer confirmed by phone\n/,
    );
    expect(shown?.stdout).toContain('use       not used yet: the next call runs once');
    expect(shown?.stdout).not.toContain('holder    --fence 0');

    // Single use: two resumes from two workers, one run; the second replays the outcome.
    expect(first).toEqual({ ask: 'ran', value: { refundId: 'r-1' }, runs: 1 });
    expect(second).toEqual({ ask: 'ran', value: { refundId: 'r-1' }, runs: 1 });
    expect(used?.stdout).toContain('state     completed');
    expect(used?.stdout).toContain('use       used: this record is the run it allowed');
    expect(late?.code).toBe(1);
    expect(late?.stderr).toContain('the record is completed, attempt 1');
    expect(late?.stderr).toContain('nothing was decided');
  }, 90_000);

  it('resolve and release of a waiting request say to decide it, and write nothing', async () => {
    const [, resolved, released, shown] = await run([
      ask('a'),
      cli('resolve', '$KEY', '--outcome', '{"refundId":"forged"}', '--by', 'bo', '--reason', 'try'),
      cli('release', '$KEY', '--by', 'bo', '--reason', 'try'),
      cli('inspect', '$KEY'),
    ]);
    for (const line of [resolved, released]) {
      expect(line?.code, line?.stderr).toBe(1);
      expect(line?.stderr).toContain('not resolvable: the record is awaiting_approval, before any attempt');
      expect(line?.stderr).toContain('decide it with toolfence approve or deny');
    }
    expect(shown?.stdout).toContain('state     awaiting_approval');
  }, 90_000);

  it('denies a call: it never runs, and a later approval does not turn the denial around', async () => {
    const [, denied, again, approveLater, shown, record] = await run([
      ask('a'),
      cli('deny', '$KEY', '--by', 'bo', '--reason', 'amount too high', '--json'),
      ask('a'),
      cli('approve', '$KEY', '--by', 'ana'),
      cli('inspect', '$KEY', '--json'),
      { record: true },
    ]);
    expect(denied?.code, denied?.stderr).toBe(0);
    expect(jsonOf(denied)[0]).toMatchObject({
      status: 'decided',
      tenant: 'acme',
      record: { state: 'denied', approval: { approved: false, by: 'bo', reason: 'amount too high' } },
      event: {
        type: 'tool.approval_decided',
        tool: 'refund',
        approval: { approved: false, by: 'bo', reason: 'amount too high' },
      },
    });
    expect(again).toEqual({ ask: 'APPROVAL_DENIED', runs: 0 });
    expect(approveLater?.code).toBe(1);
    expect(approveLater?.stderr).toContain('denied by bo at ');
    expect(approveLater?.stderr).toContain('a denial stays a denial; nothing was decided');
    expect(jsonOf(shown)[0]).toMatchObject({ record: { state: 'denied', approval: { by: 'bo' } } });
    expect(record).toMatchObject({ record: { state: 'denied', approval: { approved: false, by: 'bo' } } });
  }, 90_000);

  it('refuses to decide a request that changed since the operator inspected it: nothing written', async () => {
    const [, , owner, , asked, changed, record, decided] = await run([
      ask('a'),
      cli('inspect', '$KEY'),
      { owner: true },
      // Meanwhile the request is gone and the call asks again from another worker.
      { forget: true },
      ask('b'),
      cli('approve', '$KEY', '--by', 'ana', '--owner', '$OWNER'),
      { record: true },
      cli('approve', '$KEY', '--by', 'ana'),
    ]);
    expect(asked).toEqual({ ask: 'APPROVAL_REQUIRED', runs: 0 });
    const seen = owner?.owner as string;
    expect(changed?.code).toBe(1);
    expect(changed?.stdout).toBe('');
    expect(changed?.stderr).toContain('the request changed since you inspected it, nothing was decided');
    expect(changed?.stderr).toContain(`not ${seen})`);
    const now = (record?.record ?? {}) as { state?: string; owner?: string; approval?: unknown };
    expect(now.state).toBe('awaiting_approval');
    expect(now.owner).not.toBe(seen);
    expect(now.approval).toBeUndefined();
    // Read again (no --owner): the new request is the one decided.
    expect(decided?.code, decided?.stderr).toBe(0);
  }, 90_000);

  it('deny revokes an approval given ahead of the call (no request owner): the call never runs', async () => {
    const [ahead, listed, shown, revoked, asked] = await run([
      { approveAhead: 30 },
      cli('approvals', '--json'),
      cli('inspect', '$KEY'),
      cli('deny', '$KEY', '--by', 'ana', '--reason', 'approved by mistake'),
      ask('a'),
    ]);
    expect(ahead).toEqual({ approveAhead: 'decided' });
    expect(jsonOf(listed)).toEqual([
      expect.objectContaining({ page: expect.objectContaining({ records: 0 }) }),
    ]);
    expect(shown?.stdout).toContain('approval  approved by lead@example.com at ');
    expect(revoked?.code, revoked?.stderr).toBe(0);
    expect(revoked?.stdout).toContain('denied by ana at ');
    expect(asked).toEqual({ ask: 'APPROVAL_DENIED', runs: 0 });
  }, 90_000);

  it('says a store without decideApproval keeps no approvals (exit 3), for every approval command', async () => {
    const [, , listed, approved, denied, record] = await run([
      ask('a'),
      { withoutApprovals: true },
      cli('approvals'),
      cli('approve', '$KEY', '--by', 'ana'),
      cli('deny', '$KEY', '--by', 'ana'),
      { record: true },
    ]);
    for (const line of [listed, approved, denied]) {
      expect(line?.code).toBe(3);
      expect(line?.stdout).toBe('');
      expect(line?.stderr).toContain('StoreWithoutApprovals');
      expect(line?.stderr).toContain('it keeps no approvals (it has no decideApproval)');
    }
    expect(record).toMatchObject({ record: { state: 'awaiting_approval' } });
  }, 90_000);

  it('escapes text from the store and refuses bad input before opening the store', async () => {
    const [, noKey, emptyOwner, hostile] = await run([
      ask('a'),
      cli('approve', '', '--by', 'ana'),
      cli('deny', '$KEY', '--by', 'ana', '--owner', ''),
      cli('deny', '$KEY', '--by', 'eve\u001b[31m\u202e', '--reason', 'line\nbreak'),
    ]);
    expect(noKey?.code).toBe(2);
    expect(emptyOwner?.code).toBe(2);
    expect(emptyOwner?.stderr).toContain('--owner must not be empty');
    expect(hostile?.code, hostile?.stderr).toBe(0);
    expect(hostile?.stdout).toContain('denied by eve\\x1b[31m\\u{202e} at ');
    expect(hostile?.stdout).toContain('(line\\nbreak)');
    expect(hostile?.stdout).not.toContain('\u001b');
  }, 90_000);
});

describe('toolfence approvals on the SQLite store the CLI opens itself', () => {
  const directory = sqliteDirectory('cli-approvals');
  afterAll(() => directory.remove());

  it('keeps approvals: an empty listing of a fresh file, and approve finds no request', async () => {
    const file = directory.file('records.db');
    const store = new SQLiteStore({ path: file });
    await store.ensureSchema();
    expect(typeof (store as IdempotencyStore).decideApproval).toBe('function');
    await store.close();
    const args = ['--store', `sqlite:${file}`, '--tenant', 'shop'];
    const listed = await runCli([...args, 'approvals']);
    const approved = await runCli([...args, 'approve', 'f'.repeat(64), '--by', 'ana']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('no records in sqlite:');
    expect(listed.stdout).toContain('the namespace holds none');
    expect(approved.code).toBe(1);
    expect(approved.stderr).toContain('no call waits for a decision under this key');
  }, 90_000);
});
