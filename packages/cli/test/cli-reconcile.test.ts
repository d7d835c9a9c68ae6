// `toolfence reconcile KEY --probes MODULE` as a real process on an SQLite file (docs/reconcile.md,
// docs/operations.md "Reconcile"): the application's probe is asked, the verdict printed, and only
// `--apply` settles the record by it (`by: reconcile`).
import { writeFileSync } from 'node:fs';
import { Guard, Idempotency, IndeterminateOutcomeError } from '@toolfence/core';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../test/support/run-cli.js';
import { sqliteDirectory } from '../../../test/support/sqlite.js';

const directory = sqliteDirectory('cli-reconcile');
afterAll(() => directory.remove());

describe('toolfence reconcile', () => {
  it('asks the probe, prints the verdict, settles only with --apply; a module without policies is exit 2', async () => {
    const file = directory.file('reconcile.db');
    const store = new SQLiteStore({ path: file });
    await store.ensureSchema();
    const guard = new Guard({ store });
    const policy = { kind: Idempotency.EFFECTFUL };
    const error = await guard
      .run({ tool: 'charge', arguments: { orderId: 'A-1' }, runId: 'r', policy }, () => {
        throw Object.assign(new Error('reply lost'), { code: 'ETIMEDOUT' });
      })
      .catch((caught: unknown) => caught);
    expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
    const key = (error as IndeterminateOutcomeError).key;
    const probes = directory.file('probes.mjs');
    writeFileSync(
      probes,
      `export const policies = { charge: { kind: 'effectful', reconcile: ({ idempotencyKey }) =>
        ({ happened: true, outcome: { chargeId: 'ch_' + idempotencyKey.slice(0, 4) }, detail: 'found\\u001b[2J it' }) } };\n`,
    );
    const storeUrl = `sqlite:${file}`;
    const shown = await runCli(['reconcile', key, '--probes', probes, '--store', storeUrl]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(
      'the probe says happened after 1 try (found\\\\u001b[2J it); nothing settled (add --apply',
    );
    expect((await guard.inspect(key))?.state).toBe('indeterminate');

    const applied = await runCli([
      'reconcile',
      key,
      '--probes',
      probes,
      '--apply',
      '--json',
      '--store',
      storeUrl,
    ]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.json[0]).toMatchObject({
      key,
      status: 'probed',
      verdict: 'happened',
      applied: 'resolved',
    });
    expect((await guard.inspect(key))?.state).toBe('completed');
    expect(
      await guard.run({ tool: 'charge', arguments: { orderId: 'A-1' }, runId: 'r', policy }, () => 'no'),
    ).toEqual({
      chargeId: `ch_${key.slice(0, 4)}`,
    });
    expect((await guard.resolutions(key))[0]).toMatchObject({ by: 'reconcile', action: 'completed' });

    const empty = directory.file('empty.mjs');
    writeFileSync(empty, 'export const nothing = 1;\n');
    const refused = await runCli(['reconcile', key, '--probes', empty, '--store', storeUrl]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('exports no policies');
    await store.close();
  }, 60_000);
});
