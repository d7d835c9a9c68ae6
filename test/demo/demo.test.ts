// The README's first command, `npm run demo`, checked: its scenarios run here on MemoryStore with
// exact counts (without and with toolfence), and the CLI runs once on a real Redis, where worker A
// is a child process that is SIGKILLed mid-step and worker B takes over with fence 2, and once on an
// SQLite file, where the same happens across processes on one host, and once on DynamoDB (dynalite).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { MemoryStore } from '@toolfence/core';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { mastraRowLines } from '../../examples/demo/mastra-row.js';
import { MemoryLedger } from '../../examples/demo/provider.js';
import { type Counts, type Row, runScenarios, type ScenarioResult } from '../../examples/demo/scenarios.js';
import { verdict } from '../../examples/demo/table.js';
import { emulatorConfig, startDynalite } from '../support/dynalite.js';
import { connectRedis, deletePrefix, keysUnder, redisUrl } from '../support/redis.js';
import { sqliteDirectory } from '../support/sqlite.js';

const counts = (values: Partial<Counts>): Counts => ({
  effects: 0,
  deduplicated: 0,
  indeterminate: 0,
  abandoned: 0,
  takeovers: 0,
  takeoverFence: 0,
  ...values,
});

/** What each row must show: effects without toolfence, and everything with it. */
const expected: [string, { tool: string; without: number; with: Counts }][] = [
  // The model sends the same refund twice in one step: one refund, the second call answered
  // (1 LangChain, 2 AI SDK, 2b OpenAI Agents; likewise 3, 4, 4b below).
  ['1', { tool: 'refund_payment', without: 2, with: counts({ effects: 1, deduplicated: 1 }) }],
  ['2', { tool: 'refund_payment', without: 2, with: counts({ effects: 1, deduplicated: 1 }) }],
  ['2b', { tool: 'refund_payment', without: 2, with: counts({ effects: 1, deduplicated: 1 }) }],
  // The refund lands, its reply is lost, the host runs the job 3 times: one refund, indeterminate.
  ['3', { tool: 'refund_payment', without: 3, with: counts({ effects: 1, indeterminate: 1 }) }],
  ['4', { tool: 'refund_payment', without: 3, with: counts({ effects: 1, indeterminate: 1 }) }],
  ['4b', { tool: 'refund_payment', without: 3, with: counts({ effects: 1, indeterminate: 1 }) }],
  // The same lost reply, the refund sent with the call's idempotency key and a reconcile probe on
  // the policy: the probe finds the refund by the key, the call returns it, nobody is needed.
  ['4d', { tool: 'refund_payment', without: 3, with: counts({ effects: 1 }) }],
  // A worker dies inside both calls of a step; the step is redelivered after the lease.
  ['5a', { tool: 'refund_payment', without: 2, with: counts({ effects: 1, indeterminate: 1 }) }],
  [
    '5b',
    { tool: 'update_address', without: 2, with: counts({ effects: 2, takeovers: 1, takeoverFence: 2 }) },
  ],
  // interrupt() beside the refund; the resume runs the whole step again (createAgent 'v1').
  ['6', { tool: 'refund_payment', without: 2, with: counts({ effects: 1, deduplicated: 1 }) }],
  // The refund is an MCP server's tool; the host loses the step and a new host retries it: the
  // key travels in _meta and the server replays.
  ['7', { tool: 'refund_payment', without: 2, with: counts({ effects: 1, deduplicated: 1 }) }],
  // A durable LangGraph task(): two workers resume the thread at once and both run the pending
  // task; with guardStep the second waits and replays.
  ['8', { tool: 'refund_payment', without: 2, with: counts({ effects: 1, deduplicated: 1 }) }],
];

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Run `npm run demo -- <args>` as the README does (node + tsx loader + source condition). */
function runCli(args: string[]): Promise<{ code: number | null; output: string }> {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const child = spawn(
    process.execPath,
    ['--import', tsx, '--conditions=@toolfence/source', 'examples/demo.ts', ...args],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

describe('the Mastra rows', () => {
  it('npm run demo prints them as run by the Mastra lane, on the Node it runs on', () => {
    const lines = mastraRowLines('20.20.0').split('\n');
    expect(lines.map((text) => text.split(/ +/).slice(0, 1)[0])).toEqual(['2c', '4c']);
    for (const text of lines) {
      expect(text).toContain('Mastra');
      expect(text).toContain(
        'run by bash test/mastra/run.sh (Node 24): @mastra/core needs Node >= 22.13, this is 20.20.0',
      );
    }
  });
});

describe('demo scenarios on MemoryStore', () => {
  let results: ScenarioResult[];
  const rowsById = () =>
    new Map<string, Row>(results.flatMap((result) => result.rows).map((row) => [row.id, row]));

  // Its speed is the bench's business (npm run bench); a hang is the test timeout's.
  it('every row as expected', async () => {
    results = await runScenarios({
      store: new MemoryStore(),
      leaseMs: 600,
      newLedger: async () => new MemoryLedger(),
    });
    const rows = rowsById();
    expect([...rows.keys()]).toEqual(expected.map(([id]) => id));
    for (const [id, want] of expected) {
      const row = rows.get(id) as Row;
      expect({ id, tool: row.tool, without: row.without, with: row.with }).toEqual({ id, ...want });
      // The demo's own expectations (its ✓ column) agree with this test's.
      expect(row.expected).toEqual({ without: want.without, with: want.with });
    }
    expect(verdict(results, 0).ok).toBe(true);
  });

  it('logs the takeover with fence 2 and the indeterminate refund of the dead worker', () => {
    const events = (results.find((result) => result.id === '5') as ScenarioResult).events;
    const takeover = events.find(
      (entry) => entry.event.type === 'tool.started' && entry.event.takeover === true,
    );
    expect(takeover).toMatchObject({
      worker: 'worker B',
      event: { tool: 'update_address', fence: 2, attempt: 2 },
    });
    const indeterminate = events.filter((entry) => entry.event.type === 'tool.indeterminate');
    expect(indeterminate.map((entry) => [entry.worker, entry.event.tool, entry.event.error?.type])).toEqual([
      ['worker B', 'refund_payment', 'LeaseExpired'],
    ]);
    // The dead worker reported nothing after its death: only its two starts.
    expect(events.filter((entry) => entry.worker === 'worker A').map((entry) => entry.event.type)).toEqual([
      'tool.started',
      'tool.started',
    ]);
  });

  it('fails the verdict when a guarded count is wrong', () => {
    const broken = results.map((result) => ({
      ...result,
      rows: result.rows.map((row) => (row.id === '1' ? { ...row, with: { ...row.with, effects: 2 } } : row)),
    }));
    const result = verdict(broken, 0);
    expect(result.ok).toBe(false);
    expect(result.text).toContain('#1');
    expect(result.text).toContain('effects 2 (expected 1)');
    expect(result.text).toContain('FAIL');
  });
});

describe('demo CLI', () => {
  it(`--store ${redisUrl}: passes, worker process SIGKILLed, takeover with fence 2, keys removed`, async () => {
    // A missing Redis FAILS here, naming the command that starts it.
    const client = await connectRedis();
    try {
      const { code, output } = await runCli(['--store', redisUrl]);
      expect(output, output).toContain('✓ PASS');
      expect(code).toBe(0);
      expect(output).toMatch(
        /worker pid \d+ was SIGKILLed inside both calls; worker B took update_address over with fence 2/,
      );
      expect(output).toMatch(/5b .* update_address +2 │ +2 +0 +0 +0 +fence 2 │/);
      // Everything the demo wrote under its random prefix is gone.
      const prefix = /key prefix (tf-demo-[0-9a-f]+)/.exec(output)?.[1];
      expect(prefix).toBeDefined();
      const left = await keysUnder(client, prefix as string);
      if (left.length > 0) await deletePrefix(client, prefix as string);
      expect(left).toEqual([]);
    } finally {
      client.disconnect();
    }
  }, 120_000);

  it('--store sqlite:<file>: passes, worker process SIGKILLed, takeover with fence 2, its tables dropped', async () => {
    const directory = sqliteDirectory('demo');
    try {
      // An existing database of the user's: the demo's tables go, the user's stay.
      const path = directory.file('app.db');
      const own = new Database(path);
      own.exec('CREATE TABLE mine (x INTEGER); INSERT INTO mine VALUES (42)');
      own.close();
      const { code, output } = await runCli(['--store', `sqlite:${path}`]);
      expect(output).toContain('✓ PASS');
      expect(code).toBe(0);
      expect(output).toMatch(
        /worker pid \d+ was SIGKILLed inside both calls; worker B took update_address over with fence 2/,
      );
      expect(output).toMatch(/5b .* update_address +2 │ +2 +0 +0 +0 +fence 2 │/);
      const db = new Database(path, { readonly: true });
      try {
        const tables = (
          db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
        ).map((row) => row.name);
        expect(tables).toEqual(['mine']);
        expect(db.prepare('SELECT x FROM mine').get()).toEqual({ x: 42 });
      } finally {
        db.close();
      }
      // A file the demo created is removed again.
      const fresh = directory.file('fresh.db');
      const second = await runCli(['--store', `sqlite:${fresh}`]);
      expect(second.code).toBe(0);
      expect(existsSync(fresh)).toBe(false);
      // A directory that does not exist: exit 2, saying what to create.
      const missing = await runCli(['--store', `sqlite:${directory.file('no/such/dir/x.db')}`]);
      expect(missing.code).toBe(2);
      expect(missing.output).toContain('Create it with: mkdir -p');
    } finally {
      directory.remove();
    }
  }, 180_000);

  it('--store dynamodb:<endpoint>: passes on dynalite, and deletes its table', async () => {
    const emulator = await startDynalite();
    const admin = new DynamoDBClient(emulatorConfig(emulator.endpoint));
    try {
      const { code, output } = await runCli(['--store', `dynamodb:${emulator.endpoint}`]);
      expect(output).toContain('✓ PASS');
      expect(code).toBe(0);
      expect(output).toMatch(/5b .* update_address +2 │ +2 +0 +0 +0 +fence 2 │/);
      const table = /table (tf-demo-[0-9a-f]+), deleted at exit/.exec(output)?.[1];
      expect(table).toBeDefined();
      expect((await admin.send(new ListTablesCommand({}))).TableNames ?? []).not.toContain(table);
      const unreachable = await runCli(['--store', 'dynamodb:http://127.0.0.1:1']);
      expect(unreachable.code).toBe(2);
      expect(unreachable.output).toContain('DynamoDB is not reachable at http://127.0.0.1:1');
      expect(unreachable.output).toContain('Start an emulator with: npx dynalite');
    } finally {
      admin.destroy();
      await emulator.close();
    }
  }, 120_000);

  it('prints the table docs/demo.md shows, row for row', async () => {
    const doc = readFileSync(`${root}docs/demo.md`, 'utf8');
    const sample = /```text\n([\s\S]*?)\n```/.exec(doc)?.[1] ?? '';
    const squeeze = (line: string) => line.replace(/\s+/g, ' ').trim();
    // The scenario rows and the verdict's counts; the run's duration aside.
    const rows = sample.split('\n').filter((line) => /^(\d+[a-d]?|\s+…)\s/.test(line) && line.includes('│'));
    expect(rows.length).toBe(expected.length);
    const { code, output } = await runCli([]);
    expect(code, output).toBe(0);
    const printed = output.split('\n').map(squeeze);
    for (const row of rows) expect(printed, row).toContain(squeeze(row));
    const verdict = /✓ PASS: .*?(?= \(\d)/.exec(sample)?.[0];
    expect(verdict).toBeDefined();
    expect(output).toContain(verdict);
  }, 120_000);

  it('an unreachable store exits 2 and names the command that starts it', async () => {
    const { code, output } = await runCli(['--store', 'redis://127.0.0.1:1']);
    expect(code).toBe(2);
    expect(output).toContain('Redis is not reachable at redis://127.0.0.1:1');
    expect(output).toContain('Start it with: redis-server');
  }, 60_000);
});
