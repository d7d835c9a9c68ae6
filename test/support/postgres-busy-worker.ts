/**
 * A child process that uses one PostgresStore like a careful application (a pg Pool with
 * `pool.on('error')`, nothing else) while the parent terminates its backends
 * (packages/stores/test/terminations.postgres.test.ts). Started as
 *   node --import tsx --conditions=@toolfence/source test/support/postgres-busy-worker.ts '<json>'
 * with `{ url, applicationName, schema }`. It prints `READY` once the schema exists, then loops
 * claims, waitForSettle (the LISTEN connection), completes and ensureSchema (a checked-out
 * session) until a `stop` line on stdin; then, with the terminations over, it checks that the
 * store answers again and prints one JSON line (see {@link BusyWorkerReport}) and exits 0.
 * There is deliberately no 'uncaughtException' handler: an unhandled 'error' event on any pg
 * client exits the process with code 1, as it would a user's application.
 */
import { createInterface } from 'node:readline';
import { StoreUnavailableError } from '@toolfence/core';
import { PostgresStore } from '@toolfence/stores/postgres';
import pg from 'pg';
import { claimOptions, randomRef } from './claims.js';

/** What the worker prints when stopped. */
export interface BusyWorkerReport {
  /** Answers of each kind during the terminations: `claim:acquired`, `ensureSchema:ok`, ... */
  readonly answers: Record<string, number>;
  /** Errors that were not StoreUnavailableError (name: message), during the terminations. */
  readonly otherErrors: string[];
  /** After the terminations: a claim, waitForSettle, complete and ensureSchema that all succeeded. */
  readonly recovered: { claim: string; wait: string; complete: string; ensureSchema: readonly number[] };
}

const config = JSON.parse(process.argv[2] ?? '{}') as {
  url: string;
  applicationName: string;
  schema: string;
};
const pool = new pg.Pool({ connectionString: config.url, application_name: config.applicationName, max: 6 });
pool.on('error', () => undefined);
const store = new PostgresStore({
  pool,
  schema: config.schema,
  operationTimeoutMs: 1_000,
  pollIntervalMs: 20,
  autoCleanup: false,
});
const answers: Record<string, number> = {};
const otherErrors: string[] = [];
let stopped = false;

async function answer(label: string, pending: Promise<unknown>, kind: (value: never) => string) {
  try {
    const value = await pending;
    const key = `${label}:${kind(value as never)}`;
    answers[key] = (answers[key] ?? 0) + 1;
  } catch (error) {
    if (StoreUnavailableError.isInstance(error)) {
      answers[`${label}:unavailable`] = (answers[`${label}:unavailable`] ?? 0) + 1;
    } else {
      otherErrors.push(`${label}: ${(error as Error).name}: ${(error as Error).message}`);
    }
  }
}

/** One claim, a waiter on it (LISTEN), its complete; then ensureSchema when `withSchema`. */
async function round(withSchema: boolean): Promise<void> {
  const ref = randomRef();
  const options = claimOptions({ leaseMs: 2_000 });
  let fence: number | undefined;
  await answer('claim', store.claim(ref, options), (claim: { status: string; fence?: number }) => {
    if (claim.status === 'acquired') fence = claim.fence;
    return claim.status;
  });
  if (fence !== undefined) {
    const waiting = answer(
      'waitForSettle',
      store.waitForSettle(ref, { timeoutMs: 300 }),
      (result: string) => result,
    );
    await new Promise((resolve) => setTimeout(resolve, 5));
    const holder = { owner: options.owner, fence };
    await answer(
      'complete',
      store.complete(ref, holder, 'done', 60_000),
      (result: { status: string }) => result.status,
    );
    await waiting;
  }
  if (withSchema) await answer('ensureSchema', store.ensureSchema(), () => 'ok');
}

async function loop(index: number): Promise<void> {
  while (!stopped) await round(index === 0);
}

async function recover(): Promise<BusyWorkerReport['recovered']> {
  const ref = randomRef();
  const options = claimOptions();
  const claim = await store.claim(ref, options);
  if (claim.status !== 'acquired') throw new Error(`recovery claim: ${claim.status}`);
  const waiting = store.waitForSettle(ref, { timeoutMs: 5_000 });
  const complete = await store.complete(ref, { owner: options.owner, fence: claim.fence }, 'done', 60_000);
  const wait = await waiting;
  const schema = await store.ensureSchema();
  return { claim: claim.status, wait, complete: complete.status, ensureSchema: schema.applied };
}

await store.ensureSchema();
process.stdout.write('READY\n');
const loops = Array.from({ length: 4 }, (_, index) => loop(index));
await new Promise<void>((resolve) => {
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'stop') resolve();
  });
});
stopped = true;
await Promise.all(loops);
const report: BusyWorkerReport = { answers, otherErrors, recovered: await recover() };
process.stdout.write(`${JSON.stringify(report)}\n`);
await store.close();
await pool.end();
process.exit(0);
