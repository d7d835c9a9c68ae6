// Two concurrent resume() of one suspended workflow run, in two processes (Node 24, tsx), on the
// shared Redis (REDIS_URL, a key prefix of this test's own, deleted after) and one LibSQL
// snapshot file used as a storage without Mastra's resume claim (its compare-and-set works only
// where the storage declares concurrent updates): plain Mastra refunds in both; fenced, one
// refund, and both resumes succeed with it.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis, deletePrefix, randomPrefix, redisUrl } from '../../../test/support/redis.js';
import { Payments, refundWorkflow } from './support.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const dir = mkdtempSync(join(tmpdir(), 'toolfence-mastra-resume-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Worker {
  readonly child: ChildProcessWithoutNullStreams;
  readonly ready: Promise<void>;
  readonly done: Promise<Record<string, unknown>>;
}

function startWorker(args: string[]): Worker {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=@toolfence/source', join(here, 'resume-worker.ts'), ...args],
    { cwd: root, env: { ...process.env, NO_COLOR: '1' } },
  );
  let stdout = '';
  let stderr = '';
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolveReady) => {
    markReady = resolveReady;
  });
  child.stdout.on('data', (chunk) => {
    stdout += String(chunk);
    if (stdout.includes('ready\n')) markReady();
  });
  child.stderr.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const done = new Promise<Record<string, unknown>>((resolveDone, reject) => {
    child.on('exit', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !last.startsWith('{'))
        reject(new Error(`worker exited ${code}:\n${stdout}\n${stderr}`));
      else resolveDone(JSON.parse(last) as Record<string, unknown>);
    });
  });
  return { child, ready, done };
}

async function resumeTwiceInTwoProcesses(mode: 'fenced' | 'plain') {
  const client = await connectRedis();
  const prefix = randomPrefix('mastra-resume');
  try {
    const dbFile = join(dir, `${mode}.db`);
    const refundsFile = join(dir, `${mode}-refunds.txt`);
    // This process starts the run to its approval; the snapshot is in the shared file.
    const { workflow } = refundWorkflow({ payments: new Payments(refundsFile), dbFile });
    const run = await workflow.createRun();
    expect((await run.start({ inputData: { orderId: 'A-100', amountCents: 2250 } })).status).toBe(
      'suspended',
    );
    const args = [redisUrl, prefix, dbFile, run.runId, refundsFile, mode];
    const workers = [startWorker(args), startWorker(args)];
    await Promise.all(workers.map((worker) => worker.ready));
    for (const worker of workers) worker.child.stdin.write('go\n');
    const outcomes = await Promise.all(workers.map((worker) => worker.done));
    return { outcomes, refunds: new Payments(refundsFile).refunds };
  } finally {
    await deletePrefix(client, prefix);
    await client.quit();
  }
}

describe('two concurrent resume() of one suspended run, in two processes', () => {
  it('plain Mastra: both resumes run the refund', { timeout: 180_000 }, async () => {
    const { outcomes, refunds } = await resumeTwiceInTwoProcesses('plain');
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['success', 'success']);
    expect(refunds).toHaveLength(2);
  });

  it('fenced on Redis: one refund; both resumes succeed with it', { timeout: 180_000 }, async () => {
    const { outcomes, refunds } = await resumeTwiceInTwoProcesses('fenced');
    expect(refunds).toHaveLength(1);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['success', 'success']);
    expect(outcomes[0]?.result).toEqual(outcomes[1]?.result);
    expect(outcomes.flatMap((outcome) => outcome.events as string[])).toContain('tool.deduplicated');
  });
});
