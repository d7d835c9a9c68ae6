// A PostgresStore in a real process survives its backends being terminated over and over
// (pg_terminate_backend: FATAL 57P01, what a failover, a restart or an operator does): every
// client the store checks out (the ensureSchema session, the LISTEN connection) has an 'error'
// listener from the pool's hand-over on (packages/stores/src/postgres/pg-checkout.ts), so the
// process never exits on an unhandled 'error' event, and the store answers StoreUnavailableError
// or results meanwhile, and results again once the terminations stop.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  databaseUrl,
  dropSchema,
  requirePostgres,
  uniqueSchemaName,
} from '../../../test/support/postgres.js';
import type { BusyWorkerReport } from '../../../test/support/postgres-busy-worker.js';

const schema = uniqueSchemaName('pgterm');
/** Only backends with this name are terminated: never another test's or another session's. */
const applicationName = `toolfence-terminations-${randomBytes(6).toString('hex')}`;
const terminationsMs = 5_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let admin: pg.Client;

beforeAll(async () => {
  await requirePostgres();
  admin = new pg.Client({ connectionString: databaseUrl, application_name: `${applicationName}-admin` });
  admin.on('error', () => undefined);
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await dropSchema(schema);
});

interface Worker {
  /** Resolves with the exit code and everything the process wrote to stderr. */
  readonly exited: Promise<{ code: number | null; stderr: string }>;
  /** Resolves with the report once `stop` was written; rejects if the process exits first. */
  stop(): Promise<BusyWorkerReport>;
}

async function startWorker(): Promise<Worker> {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const script = fileURLToPath(new URL('../../../test/support/postgres-busy-worker.ts', import.meta.url));
  const options = JSON.stringify({ url: databaseUrl, applicationName, schema });
  const child = spawn(
    process.execPath,
    ['--import', tsx, '--conditions=@toolfence/source', script, options],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stderr })),
  );
  const lines: string[] = [];
  let onLine: () => void = () => undefined;
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    onLine();
  });
  const nextLine = () =>
    new Promise<string>((resolve, reject) => {
      const take = () => {
        const line = lines.shift();
        if (line !== undefined) resolve(line);
      };
      onLine = take;
      take();
      void exited.then(({ code }) => reject(new Error(`worker exited (${code}):\n${stderr}`)));
    });
  expect(await nextLine()).toBe('READY');
  return {
    exited,
    async stop() {
      child.stdin.write('stop\n');
      return JSON.parse(await nextLine()) as BusyWorkerReport;
    },
  };
}

/** Terminates every backend named `applicationName` every few ms until `until`; returns how many. */
async function terminateUntil(until: Promise<unknown>): Promise<number> {
  let done = false;
  void until.finally(() => {
    done = true;
  });
  let terminated = 0;
  while (!done) {
    const result = await admin.query(
      'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
      [applicationName],
    );
    terminated += result.rows[0].n as number;
    await sleep(2 + Math.random() * 6);
  }
  return terminated;
}

describe('PostgresStore under backend terminations', () => {
  it('claims, waiters (LISTEN) and ensureSchema while its backends are terminated every few ms: the process never crashes, the store keeps answering', async () => {
    const worker = await startWorker();
    // The process exiting ends the terminations at once (and fails below with its stderr).
    const terminations = terminateUntil(Promise.race([sleep(terminationsMs), worker.exited]));
    const terminated = await terminations;
    const outcome = await Promise.race([
      worker.stop().then(
        (report) => ({ report }),
        () => worker.exited.then((exit) => ({ exit })),
      ),
      worker.exited.then((exit) => ({ exit })),
    ]);
    expect('exit' in outcome ? `exited ${outcome.exit.code}: ${outcome.exit.stderr}` : 'running').toBe(
      'running',
    );
    const { report } = outcome as { report: BusyWorkerReport };
    expect(terminated, 'backends terminated').toBeGreaterThan(50);
    expect(report.otherErrors).toEqual([]);
    // Every kind of work was really done, and really hit, during the terminations.
    for (const answer of [
      'claim:acquired',
      'claim:unavailable',
      'complete:completed',
      'waitForSettle:settled',
      'ensureSchema:ok',
    ]) {
      expect(report.answers[answer] ?? 0, answer).toBeGreaterThan(0);
    }
    expect(report.recovered).toEqual({
      claim: 'acquired',
      wait: 'settled',
      complete: 'completed',
      ensureSchema: [],
    });
    expect((await worker.exited).code).toBe(0);
  }, 60_000);
});
