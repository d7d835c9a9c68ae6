import { performance } from 'node:perf_hooks';
import { Guard, type IdempotencyStore } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { type Row, row } from '../lib/report.js';
import { connectPostgres, connectRedis, deleteRedisPrefix, randomName } from '../lib/services.js';
import { median, quantile } from '../lib/stats.js';
import { effectfulPolicy, outcome100, scaled } from '../lib/workloads.js';
import { postgresPoolSize, throwawayPostgresStore } from './postgres.js';

const callers = 1_000;
/** Longest the winner's body waits for every other caller to be waiting. */
const barrierTimeoutMs = 20_000;
/** After the last caller started waiting: time for its subscription and first read to finish. */
const settleMs = 100;

interface CollapseRound {
  readonly executions: number;
  /** From the winner's body returning to each waiter's answer, in milliseconds. */
  readonly waiterLatenciesMs: number[];
}

/**
 * 1,000 concurrent identical EFFECTFUL calls: one runs the body, 999 wait for its answer.
 * The body holds until every other caller is waiting (their `tool.waiting` events), so all
 * 999 are woken by the completion, not answered by a late claim.
 */
async function collapseRound(store: IdempotencyStore, round: number): Promise<CollapseRound> {
  let waiting = 0;
  let allWaiting: () => void = () => {};
  const everyoneWaits = new Promise<void>((resolve) => {
    allWaiting = resolve;
  });
  const guard = new Guard({
    store,
    onEvent: (event) => {
      if (event.type === 'tool.waiting' && ++waiting === callers - 1) allWaiting();
    },
  });
  let executions = 0;
  let bodyReturnedMs = Number.NaN;
  const orderId = `collapse-${Date.now()}-${round}`;
  const answeredMs: number[] = [];
  const results = await Promise.all(
    Array.from({ length: callers }, async () => {
      let ranBody = false;
      const value = await guard.run(
        {
          tool: 'charge_card',
          runId: 'collapse',
          arguments: { orderId, amount: 42 },
          policy: effectfulPolicy,
        },
        async () => {
          executions++;
          ranBody = true;
          const timeout = new Promise((resolve) => setTimeout(resolve, barrierTimeoutMs));
          await Promise.race([everyoneWaits, timeout]);
          await new Promise((resolve) => setTimeout(resolve, settleMs));
          bodyReturnedMs = performance.now();
          return outcome100(round);
        },
      );
      if (!ranBody) answeredMs.push(performance.now());
      return value;
    }),
  );
  const expected = JSON.stringify(outcome100(round));
  if (results.some((value) => JSON.stringify(value) !== expected)) {
    throw new Error('collapse: a caller got another answer than the recorded outcome');
  }
  if (waiting < callers - 1) {
    throw new Error(
      `collapse: only ${waiting} of ${callers - 1} callers were waiting after ${barrierTimeoutMs} ms`,
    );
  }
  return { executions, waiterLatenciesMs: answeredMs.map((atMs) => atMs - bodyReturnedMs) };
}

async function collapseRows(label: string, store: IdempotencyStore): Promise<Row[]> {
  const rounds = scaled(3);
  const p99s: number[] = [];
  const p50s: number[] = [];
  let mostExecutions = 0;
  for (let round = 0; round < rounds; round++) {
    const result = await collapseRound(store, round);
    mostExecutions = Math.max(mostExecutions, result.executions);
    p99s.push(quantile(result.waiterLatenciesMs, 0.99));
    p50s.push(quantile(result.waiterLatenciesMs, 0.5));
  }
  return [
    row(
      `collapse: ${label}, 1,000 identical EFFECTFUL calls, executions (most in a round)`,
      'executions',
      mostExecutions,
      null,
      '== 1',
    ),
    row(`collapse: ${label}, winner done -> waiter answered p50`, 'ms', median(p50s)),
    row(`collapse: ${label}, winner done -> waiter answered p99`, 'ms', median(p99s), null, '<= 10'),
  ];
}

export async function collapseRedisSuite(): Promise<Row[]> {
  const client = await connectRedis();
  const prefix = randomName('collapse');
  const store = new RedisStore({ client, prefix });
  try {
    return await collapseRows('redis', store);
  } finally {
    await store.close();
    await deleteRedisPrefix(client, prefix);
    client.disconnect();
  }
}

export async function collapsePostgresSuite(): Promise<Row[]> {
  const pool = await connectPostgres(postgresPoolSize);
  const { store, drop } = await throwawayPostgresStore(pool, 'collapse');
  try {
    return await collapseRows('postgres', store);
  } finally {
    await drop();
    await pool.end();
  }
}
