// docs/operations.md's examples, run as written: every ```bash / ```sh block that invokes
// `toolfence` runs in bash (`set -e -o pipefail`) against a store seeded with the walk-through's
// two stopped refunds (tenant shop; a fresh SQLite file per block, named by TOOLFENCE_STORE), with
// `toolfence` and `npx toolfence` running this checkout's CLI. A ```text block right after a
// command block is what it prints: each of its lines must appear in the output, times, ages,
// owner ids and the store's path aside.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Guard, Idempotency, type IdempotencyPolicy, IndeterminateOutcomeError } from '@toolfence/core';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { sqliteDirectory } from '../../../test/support/sqlite.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const doc = readFileSync(join(root, 'docs/operations.md'), 'utf8');
const directory = sqliteDirectory('operations-doc');
afterAll(() => directory.remove());

interface Block {
  readonly info: string;
  readonly body: string;
  /** Line number of the opening fence (1-based). */
  readonly line: number;
  /** Line number of the closing fence. */
  readonly end: number;
}

/** The fenced blocks of `markdown` in order (indented ones too, their indentation removed). */
function fencedBlocks(markdown: string): Block[] {
  const found: Block[] = [];
  const lines = markdown.split('\n');
  for (let index = 0; index < lines.length; index++) {
    // The info string's first word is the kind; a ts block names its source after it.
    const open = /^( *)```(\w*)(\s[^`]*)?$/.exec(lines[index] as string);
    if (open === null) continue;
    const indent = (open[1] ?? '').length;
    const closing = lines.findIndex((text, at) => at > index && text.trim() === '```');
    if (closing === -1) break;
    const body = lines
      .slice(index + 1, closing)
      .map((text) => text.slice(Math.min(indent, text.length - text.trimStart().length)))
      .join('\n');
    found.push({ info: open[2] ?? '', body, line: index + 1, end: closing + 1 });
    index = closing;
  }
  return found;
}

/** A line that runs `toolfence` (comments aside). */
const INVOKES = /(^|[\s(;|&])(npx )?toolfence\s/;

const all = fencedBlocks(doc);
const examples = all.flatMap((block, index) => {
  if (!['bash', 'sh'].includes(block.info)) return [];
  if (!block.body.split('\n').some((text) => INVOKES.test(text.replace(/#.*$/, '')))) return [];
  const next = all[index + 1];
  // Its output: a text block after it with nothing but prose between them.
  const between =
    next === undefined
      ? ''
      : doc
          .split('\n')
          .slice(block.end, next.line - 1)
          .join('\n');
  const prints = next?.info === 'text' && between.trim() === '' ? next.body : undefined;
  return [{ ...block, prints }];
});

const policy: IdempotencyPolicy<{ orderId: string; amount: number }> = {
  kind: Idempotency.EFFECTFUL,
  describe: (args) => `refund ${args.orderId} EUR ${args.amount}`,
};

/** The walk-through's store: refunds of tenant shop stopped as indeterminate. */
async function seededStore(name: string): Promise<string> {
  const file = directory.file(`${name}.db`);
  const store = new SQLiteStore({ path: file });
  await store.ensureSchema();
  const guard = new Guard({ store, tenant: 'shop' });
  for (const [orderId, amount, runId] of [
    ['A-100', 30, 'support-42'],
    ['A-200', 45, 'support-43'],
  ] as const) {
    await guard
      .run(
        {
          tool: 'refund_order',
          arguments: { orderId, amount },
          runId,
          callId: 'call_1',
          policy: policy as unknown as IdempotencyPolicy,
        },
        () => Promise.reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })),
      )
      .catch((error: unknown) => {
        if (!(error instanceof IndeterminateOutcomeError)) throw error;
      });
  }
  await store.close();
  return file;
}

/** `toolfence` and `npx toolfence` on PATH, running this checkout's CLI from its sources. */
function shims(): string {
  const bin = directory.file('bin');
  mkdirSync(bin, { recursive: true });
  const cli = `exec '${process.execPath}' --import tsx --conditions=@toolfence/source '${join(root, 'packages/cli/src/bin.ts')}' "$@"`;
  writeFileSync(join(bin, 'toolfence'), `#!/bin/sh\n${cli}\n`);
  writeFileSync(
    join(bin, 'npx'),
    `#!/bin/sh\n[ "$1" = toolfence ] || { echo "npx $1: not part of this test" >&2; exit 127; }\nshift\n${cli}\n`,
  );
  chmodSync(join(bin, 'toolfence'), 0o755);
  chmodSync(join(bin, 'npx'), 0o755);
  return bin;
}

function bash(
  script: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -e -o pipefail\n${script}`], { cwd: root, env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** What varies from run to run: ages, times, owner ids, the store's path, column padding. */
function normalized(text: string, storePath: string): string {
  return text
    .replaceAll(storePath, 'STORE')
    .replace(/sqlite:\/var\/lib\/shop\/toolfence\.db/g, 'sqlite:STORE')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, 'TIME')
    .replace(/\b\d+(ms|s|m|h|d)( \d+(s|m|h))?(?=\s)/g, 'AGE')
    .replace(/--owner \S+/g, '--owner OWNER')
    .replace(/[ \t]+/g, ' ')
    .trim();
}

describe('docs/operations.md, run as written', () => {
  it('has the examples this test runs', () => {
    // The quick start, list, inspect, resolve with the holder, release and the history.
    expect(examples.length).toBeGreaterThanOrEqual(5);
    expect(examples.filter((example) => example.prints !== undefined).length).toBeGreaterThanOrEqual(4);
  });

  const bin = shims();
  it.each(examples.map((example) => [example.line, example] as const))(
    'the example at line %i runs and prints what the doc shows',
    async (line, example) => {
      const file = await seededStore(`line-${line}`);
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        PATH: `${bin}:${process.env.PATH ?? ''}`,
        TOOLFENCE_STORE: `sqlite:${file}`,
        TOOLFENCE_TENANT: '',
        TOOLFENCE_OPERATOR: '',
      };
      const run = await bash(example.body, env);
      expect(run.code, `line ${line}:\n${example.body}\n${run.stderr}`).toBe(0);
      expect(run.stderr, `line ${line}`).not.toMatch(/Error|error:/);
      if (example.prints === undefined) return;
      const printed = normalized(run.stdout, file);
      for (const expected of example.prints.split('\n')) {
        if (expected.trim() === '' || expected.trim() === '...') continue;
        expect(printed, `line ${line}: ${expected}`).toContain(normalized(expected, file));
      }
    },
    120_000,
  );
});
