// The coordinator of the fault suite: starts worker processes (worker.ts), delivers a shared
// plan of guarded calls to them with deliberate duplicates, injects faults (SIGKILL mid-body,
// SIGSTOP past the lease, a killed store connection, delayed lease renewals, the store losing
// its records, the store freezing), then reads the effect ledger and the store's records and
// checks the whole history (checks.ts).
//
// The workers reach the store through a stalling proxy (test/support/stalling-proxy.ts); on
// Redis the store is a private redis-server this run starts (it is flushed and restarted), and
// the ledger stays on REDIS_URL, which no fault touches. On PostgreSQL the store and the ledger
// are tables of the run's own schema; a record loss truncates the records table only.
//
// Used by fault-suite.ts (faults.redis.test.ts, faults.postgres.test.ts: the CI run) and by soak.ts.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type IdempotencyRecord, type IdempotencyStore, idempotencyKey } from '@toolfence/core';
import { PostgresStore } from '@toolfence/stores/postgres';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { dynamoStore, startDynalite, startDynaliteOn } from '../support/dynalite.js';
import { connectPostgres, databaseUrl } from '../support/postgres.js';
import { connectRedis, deletePrefix, redisUrl } from '../support/redis.js';
import { killRedisServers, startRedisServer } from '../support/redis-server.js';
import { seededRandom } from '../support/seeded-random.js';
import { type StallingProxy, startStallingProxy } from '../support/stalling-proxy.js';
import {
  checkHistory,
  type History,
  type HistoryChecks,
  type KeyRelease,
  type RecordLoss,
  TERMINAL_ANSWERS,
  type TimedAnswer,
} from './checks.js';
import { postgresDeletionLogDdl, readPostgresDeletions } from './deletion-log.js';
import { dumpHistory } from './history-dump.js';
import { checkIndex, type IndexCheck, listEveryRecord } from './index-check.js';
import { type Ledger, postgresLedger, postgresLedgerDdl, redisLedger } from './ledger.js';
import {
  type Answer,
  type AnswerKind,
  type BodyProfile,
  type CoordinatorMessage,
  EFFECTFUL_TOOL,
  type EventMessage,
  IDEMPOTENT_TOOL,
  type StoreKind,
  type ToolName,
  type WorkerConfig,
  type WorkerMessage,
} from './protocol.js';

const here = dirname(fileURLToPath(import.meta.url));
const repositoryRoot = join(here, '..', '..');
const workerScript = join(here, 'worker.ts');
export const lastRunFile = join(here, 'last-run.json');

/** The ports the run's private redis-server may take (TOOLFENCE_PRIVATE_REDIS_PORTS, comma-separated). */
const privateRedisPorts = (
  process.env.TOOLFENCE_PRIVATE_REDIS_PORTS ?? '6421,6422,6423,6424,6425,6426,6427,6428,6429'
)
  .split(',')
  .map(Number);

export const FAULT_KINDS = [
  'sigkill',
  'sigstop',
  'connection-kill',
  'renew-delay',
  'record-loss',
  'store-freeze',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/**
 * The fault kinds named by a comma-separated list (the FAULT_KINDS environment variable, soak's
 * --kinds); every kind when `text` is empty or undefined.
 * @throws Error naming an unknown kind
 */
export function parseFaultKinds(text: string | undefined): readonly FaultKind[] {
  if (text === undefined || text.trim() === '') return FAULT_KINDS;
  const kinds = text.split(',').map((kind) => kind.trim());
  for (const kind of kinds) {
    if (!(FAULT_KINDS as readonly string[]).includes(kind)) {
      throw new Error(`unknown fault kind "${kind}"; the kinds are ${FAULT_KINDS.join(', ')}`);
    }
  }
  return [...new Set(kinds)] as FaultKind[];
}

export interface FaultRunOptions {
  readonly store: StoreKind;
  /** Calls of the plan (each a caller that wants an answer). At least this many are made. */
  readonly calls: number;
  /** Faults to inject, at least. Dispatch is paced so they spread over the whole run. */
  readonly faults: number;
  /** Soak: keep making calls (and faults) until this much time has passed. */
  readonly durationMs?: number;
  readonly workers?: number;
  readonly leaseMs?: number;
  readonly maxAttempts?: number;
  /** Calls open at once. */
  readonly concurrency?: number;
  /** Mean time between two faults. */
  readonly faultIntervalMs?: number;
  /** Fault kinds to inject, in rotation. Default: every kind. */
  readonly kinds?: readonly FaultKind[];
  /** Client-side deadline of the workers' store operations. Default 1,000 ms. */
  readonly operationTimeoutMs?: number;
  readonly seed?: number;
  readonly log?: (line: string) => void;
}

export interface FaultRunReport {
  readonly store: StoreKind;
  readonly calls: number;
  readonly faults: Record<FaultKind, number>;
  readonly executions: number;
  readonly duplicates: number;
  readonly lost: number;
  readonly staleFenced: number;
  readonly durationMs: number;
  readonly faultsTotal: number;
  readonly keys: number;
  /** Deliveries of calls to workers: first deliveries, twins, retries and redeliveries. */
  readonly deliveries: Record<DeliveryReason, number>;
  readonly answers: Record<AnswerKind, number>;
  readonly renewalsDelayed: number;
  readonly connectionsKilled: number;
  /**
   * Record losses by how: `flush` (FLUSHALL / TRUNCATE), `restart` (Redis killed, started empty)
   * and `evict` (Redis' own eviction: an evicting policy and a maxmemory below what it holds).
   */
  readonly recordLosses: Record<string, number>;
  /** Store freezes (the proxy held every byte): how many, for how long, how many outlasted the deadline. */
  readonly freezes: {
    readonly count: number;
    readonly totalMs: number;
    readonly longerThanDeadline: number;
    readonly operationTimeoutMs: number;
    /**
     * "Store unavailable" answers of deliveries that entered no body, and how long their callers
     * waited (median, 99th percentile, longest; ms): bounded by the guard's one budget per step
     * (the store's operationTimeoutMs) plus any wait for a busy holder before the claim failed.
     */
    readonly unavailableAnswers: {
      readonly count: number;
      readonly p50Ms: number;
      readonly p99Ms: number;
      readonly maxMs: number;
    };
  };
  /** The fault kinds of the run. */
  readonly kinds: readonly FaultKind[];
  /**
   * Claims answered with a record held by their own (unique) owner, by status: one claim that
   * ran twice on the store (a resent command). Not a duplicate execution; see docs/faults.md.
   */
  readonly ownClaims: Record<string, number>;
  /**
   * Of `checks.indeterminateUnexecuted`: keys where a claim had failed with the store unreachable
   * (it may have landed, leaving a claim nobody runs, which later reads as a lost holder).
   */
  readonly indeterminateUnexecutedAfterFailedClaim: number;
  readonly workersStarted: number;
  readonly unexpectedWorkerExits: number;
  readonly seed: number;
  readonly checks: HistoryChecks['detail'];
  /** The operator's listing against the records after the run (index-check.ts). */
  readonly index: IndexCheck;
  readonly violations: readonly string[];
}

type DeliveryReason = 'first' | 'twin' | 'retry-timeout' | 'retry-pending' | 'redeliver';

interface PlanKey {
  readonly key: string;
  readonly tool: ToolName;
  readonly arguments: Record<string, unknown>;
  readonly body: BodyProfile;
}

interface Call {
  readonly id: string;
  readonly planKey: PlanKey;
  readonly twin: boolean;
  readonly deliveries: Delivery[];
  readonly answers: TimedAnswer[];
  final: Answer | undefined;
  retries: number;
  gaveUp: boolean;
  settle: () => void;
  readonly settled: Promise<void>;
}

interface Delivery {
  readonly id: number;
  readonly call: Call;
  readonly worker: WorkerProcess;
  readonly reason: DeliveryReason;
  readonly sentMs: number;
  answered: boolean;
  died: boolean;
  timer: NodeJS.Timeout | undefined;
}

interface WorkerProcess {
  readonly slot: number;
  readonly name: string;
  readonly child: ChildProcess;
  pid: number;
  state: 'starting' | 'ready' | 'stopped' | 'dead';
  readonly open: Map<number, Delivery>;
  readonly activeBodies: Set<string>;
  readonly ready: Promise<void>;
  readonly exited: Promise<void>;
  killedByUs: boolean;
  stderrTail: string;
  renewalsDelayed: number;
  onDrained: (() => void) | undefined;
  continueTimer: NodeJS.Timeout | undefined;
}

/** Every worker process ever started, so a failed test can still kill them all. */
const allChildren = new Set<ChildProcess>();

/** SIGKILLs every worker process (and private redis-server) this module started that is still running. */
export function killAllWorkers(): void {
  killRedisServers();
  for (const child of allChildren) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
  allChildren.clear();
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---- the services ----

interface Backend {
  /** Store used by the coordinator to read records (directly, never through the proxy). */
  readonly store: IdempotencyStore;
  readonly ledger: Ledger;
  /** The workers' store address: the stalling proxy. */
  readonly url: string;
  readonly ledgerUrl: string;
  readonly namespace: string;
  readonly proxy: StallingProxy;
  /** Kills every store connection named `name`; returns how many were killed. */
  killConnections(name: string): Promise<number>;
  /**
   * The store forgets every record: FLUSHALL / restart empty / eviction (Redis), TRUNCATE
   * (PostgreSQL).
   */
  loseRecords(how: 'flush' | 'restart' | 'evict'): Promise<string>;
  /**
   * Every record the store deleted (a release that landed), as the store logged it, when the
   * store can log them (PostgreSQL: a trigger). Absent: only the releases the workers saw answered.
   */
  readDeletions?(): Promise<KeyRelease[]>;
  cleanup(): Promise<void>;
}

async function redisBackend(runTag: string): Promise<Backend> {
  // The ledger's Redis (REDIS_URL) must be there; the store is a private server of this run.
  const ledgerAdmin = await connectRedis({ maxRetriesPerRequest: 1 });
  const server = await startRedisServer({ ports: privateRedisPorts });
  const port = server.port;
  const admin = new Redis({ host: '127.0.0.1', port, retryStrategy: (times) => Math.min(times * 20, 200) });
  admin.on('error', () => {});
  const proxy = await startStallingProxy(port);
  const prefix = `tf-faults-${runTag}`;
  const store = new RedisStore({ client: admin, prefix });
  const ledger = redisLedger(redisUrl, prefix, `tf-faults-${runTag}-coordinator-ledger`);
  return {
    store,
    ledger,
    url: `redis://${proxy.address}`,
    ledgerUrl: redisUrl,
    namespace: prefix,
    proxy,
    async loseRecords(how) {
      if (how === 'flush') {
        await admin.flushall();
        return `FLUSHALL on 127.0.0.1:${port}`;
      }
      if (how === 'evict') {
        // What a managed Redis at maxmemory with allkeys-random does, to every key at once (the
        // checks model a loss as total): the server evicts on the next command it processes.
        // The stores checked noeviction when they started; this is a policy changed under them.
        await admin.config('SET', 'maxmemory-policy', 'allkeys-random');
        await admin.config('SET', 'maxmemory', '1');
        try {
          // Eviction is bounded per command (maxmemory-eviction-tenacity) and goes on in the
          // background: poll until every key is gone.
          let left = -1;
          for (const deadline = Date.now() + 5_000; left !== 0 && Date.now() < deadline; ) {
            await admin.ping();
            left = await admin.dbsize();
          }
          const evicted = /^evicted_keys:(\d+)/m.exec(String(await admin.info('stats')))?.[1];
          if (left !== 0) throw new Error(`eviction left ${left} keys on 127.0.0.1:${port}`);
          return `redis-server on ${port} evicted every key (maxmemory 1, allkeys-random; evicted_keys ${evicted})`;
        } finally {
          await admin.config('SET', 'maxmemory', '0');
          await admin.config('SET', 'maxmemory-policy', 'noeviction');
        }
      }
      await server.restartEmpty();
      return `redis-server on ${port} killed (SIGKILL) and started empty`;
    },
    async killConnections(name) {
      const list = String(await admin.client('LIST'));
      let killed = 0;
      for (const line of list.split('\n')) {
        const id = /(?:^|\s)id=(\d+)/.exec(line)?.[1];
        const connectionName = /(?:^|\s)name=(\S*)/.exec(line)?.[1];
        if (id === undefined || connectionName !== name) continue;
        killed += Number(await admin.client('KILL', 'ID', id));
      }
      return killed;
    },
    async cleanup() {
      await store.close();
      await ledger.close();
      admin.disconnect();
      await proxy.close();
      await server.stop();
      await deletePrefix(ledgerAdmin, prefix);
      ledgerAdmin.disconnect();
    },
  };
}

async function postgresBackend(runTag: string): Promise<Backend> {
  const admin = await connectPostgres({
    max: 4,
    connectionTimeoutMillis: 5_000,
    application_name: 'tf-faults-admin',
  });
  const schema = `tf_faults_${runTag}`;
  const store = new PostgresStore({ pool: admin, schema, autoCleanup: false });
  await store.ensureSchema();
  await admin.query(postgresLedgerDdl(schema));
  await admin.query(postgresDeletionLogDdl(schema, store.tableName));
  const ledger = postgresLedger(databaseUrl, schema, `tf-faults-${runTag}-coordinator-ledger`);
  const target = new URL(databaseUrl);
  const proxy = await startStallingProxy(Number(target.port || 5432), target.hostname);
  const viaProxy = new URL(databaseUrl);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  return {
    store,
    ledger,
    url: viaProxy.toString(),
    ledgerUrl: databaseUrl,
    namespace: schema,
    proxy,
    async loseRecords() {
      // Only the records table of this run's own schema; the ledger beside it stays.
      await admin.query(`BEGIN; SET LOCAL lock_timeout = '5s'; TRUNCATE ${store.tableName}; COMMIT`);
      return `TRUNCATE ${store.tableName}`;
    },
    async readDeletions() {
      return readPostgresDeletions(admin, schema);
    },
    async killConnections(name) {
      // Two statements on purpose: in one, the planner may call pg_terminate_backend on rows
      // before the application_name filter has removed them (it killed unrelated sessions).
      const targets = await admin.query(
        'SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
        [name],
      );
      let killed = 0;
      for (const row of targets.rows as { pid: number }[]) {
        const result = await admin.query('SELECT pg_terminate_backend($1::int) AS done', [row.pid]);
        if (result.rows[0]?.done === true) killed += 1;
      }
      return killed;
    },
    async cleanup() {
      await store.close();
      await ledger.close();
      await proxy.close();
      await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      await admin.end();
    },
  };
}

/**
 * DynamoDB: a dynalite of this run (a child process; in memory), the workers through the stalling
 * proxy, the ledger on the shared Redis under the run's prefix. Record loss kills dynalite and
 * starts it empty on the same port (the table created again while the proxy holds the workers);
 * DynamoDB's HTTP connections carry no name, so a connection kill drops every connection through
 * the proxy.
 */
async function dynamoBackend(runTag: string): Promise<Backend> {
  const ledgerAdmin = await connectRedis({ maxRetriesPerRequest: 1 });
  let emulator = await startDynalite();
  const port = emulator.port;
  const namespace = `tf-faults-${runTag}`;
  const store = dynamoStore(emulator.endpoint, namespace);
  await store.ensureSchema();
  const ledger = redisLedger(redisUrl, namespace, `tf-faults-${runTag}-coordinator-ledger`);
  const proxy = await startStallingProxy(port);
  return {
    store,
    ledger,
    url: `http://${proxy.address}`,
    ledgerUrl: redisUrl,
    namespace,
    proxy,
    async loseRecords() {
      await emulator.close();
      emulator = await startDynaliteOn(port);
      await store.ensureSchema();
      return `dynalite on ${port} killed (SIGTERM) and started empty, table ${namespace} created again`;
    },
    async killConnections() {
      const before = proxy.connectionCount;
      proxy.dropConnections();
      return before > 0 ? 1 : 0;
    },
    async cleanup() {
      await store.close();
      await ledger.close();
      await proxy.close();
      await emulator.close();
      await deletePrefix(ledgerAdmin, namespace);
      ledgerAdmin.disconnect();
    },
  };
}

// ---- the run ----

export async function runFaults(options: FaultRunOptions): Promise<FaultRunReport> {
  // FAULT_SEED replays a run's schedule of faults and calls (the log's "seed N"); the workers'
  // timing still varies, so a replay makes a failure likelier, not certain.
  const fromEnv = process.env.FAULT_SEED === undefined ? undefined : Number(process.env.FAULT_SEED);
  if (fromEnv !== undefined && !Number.isSafeInteger(fromEnv))
    throw new Error(`FAULT_SEED is not an integer: ${process.env.FAULT_SEED}`);
  const seed = options.seed ?? fromEnv ?? Math.floor(Math.random() * 2 ** 31);
  const rng = seededRandom(seed);
  const log = options.log ?? (() => undefined);
  const workerCount = options.workers ?? 4;
  const leaseMs = options.leaseMs ?? 500;
  const heartbeatMs = Math.floor(leaseMs / 3);
  const maxAttempts = options.maxAttempts ?? 3;
  const concurrency = options.concurrency ?? 36;
  const faultIntervalMs = options.faultIntervalMs ?? 280;
  const kinds = options.kinds ?? FAULT_KINDS;
  if (kinds.length === 0) throw new Error('runFaults needs at least one fault kind');
  const operationTimeoutMs = options.operationTimeoutMs ?? 1_000;
  const clientTimeoutMs = leaseMs * 2;
  const maxRetries = 60;
  const tenant = 'faults';
  const runTag = randomBytes(5).toString('hex');
  const runId = `run-${runTag}`;
  const startedMs = Date.now();

  const backend =
    options.store === 'redis'
      ? await redisBackend(runTag)
      : options.store === 'dynamodb'
        ? await dynamoBackend(runTag)
        : await postgresBackend(runTag);

  const faults = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0])) as Record<FaultKind, number>;
  let faultsTotal = 0;
  const deliveries: Record<DeliveryReason, number> = {
    first: 0,
    twin: 0,
    'retry-timeout': 0,
    'retry-pending': 0,
    redeliver: 0,
  };
  const answers = Object.fromEntries(
    ['completed', 'deduplicated', 'indeterminate', 'abandoned', 'pending', 'unavailable', 'error'].map(
      (kind) => [kind, 0],
    ),
  ) as Record<AnswerKind, number>;
  const events: EventMessage[] = [];
  const bodyEnds = new Map<string, boolean>();
  const bodyEndTimes = new Map<string, number>();
  const killedPids = new Set<number>();
  const calls: Call[] = [];
  const planKeys = new Map<string, PlanKey>();
  const ownClaims: Record<string, number> = {};
  const keysWithFailedClaims = new Set<string>();
  let connectionsKilled = 0;
  let workersStarted = 0;
  let unexpectedWorkerExits = 0;
  let renewalsDelayedByDead = 0;
  let nextDeliveryId = 1;
  const losses: RecordLoss[] = [];
  const releases: KeyRelease[] = [];
  const lossKinds: Record<string, number> = {};
  /** Store freezes: how long each one held the proxy, and how many outlasted the deadline. */
  const freezesMs: number[] = [];
  /** Latency of each "store unavailable" answer of a delivery that entered no body. */
  const unavailableAnswerMs: number[] = [];
  let finishing = false;
  const workers: (WorkerProcess | undefined)[] = new Array(workerCount).fill(undefined);

  // ---- workers ----

  function startWorker(slot: number): WorkerProcess {
    const generation = ++workersStarted;
    const name = `tf-faults-${runTag}-w${slot}g${generation}`;
    const config: WorkerConfig = {
      store: options.store,
      url: backend.url,
      ledgerUrl: backend.ledgerUrl,
      operationTimeoutMs,
      namespace: backend.namespace,
      connectionName: name,
      ledgerConnectionName: `${name}-ledger`,
      tenant,
      leaseMs,
      heartbeatMs,
      maxAttempts,
      retentionMs: 3_600_000,
    };
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--conditions=@toolfence/source', workerScript, JSON.stringify(config)],
      {
        cwd: repositoryRoot,
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      },
    );
    allChildren.add(child);
    let markReady!: () => void;
    let markExited!: () => void;
    const worker: WorkerProcess = {
      slot,
      name,
      child,
      pid: child.pid ?? 0,
      state: 'starting',
      open: new Map(),
      activeBodies: new Set(),
      ready: new Promise<void>((resolve) => {
        markReady = resolve;
      }),
      exited: new Promise<void>((resolve) => {
        markExited = resolve;
      }),
      killedByUs: false,
      stderrTail: '',
      renewalsDelayed: 0,
      onDrained: undefined,
      continueTimer: undefined,
    };
    child.stderr?.on('data', (chunk: Buffer) => {
      worker.stderrTail = (worker.stderrTail + chunk.toString()).slice(-4000);
    });
    // A send to a worker that just died fails with EPIPE as an 'error' event: its exit handler
    // redelivers what it held.
    child.on('error', () => {});
    child.on('message', (message: WorkerMessage) => onWorkerMessage(worker, message, markReady));
    child.on('exit', () => {
      allChildren.delete(child);
      onWorkerExit(worker);
      markReady();
      markExited();
    });
    workers[slot] = worker;
    return worker;
  }

  function onWorkerMessage(worker: WorkerProcess, message: WorkerMessage, markReady: () => void): void {
    switch (message.t) {
      case 'ready':
        worker.pid = message.pid;
        if (worker.state === 'starting') worker.state = 'ready';
        markReady();
        break;
      case 'answer':
        onAnswer(worker, message);
        break;
      case 'event':
        events.push(message);
        break;
      case 'body':
        if (message.phase === 'start') worker.activeBodies.add(message.execId);
        else {
          worker.activeBodies.delete(message.execId);
          bodyEnds.set(message.execId, message.returned === true);
          bodyEndTimes.set(message.execId, message.timeMs ?? Date.now());
        }
        break;
      case 'renew-delayed':
        worker.renewalsDelayed += 1;
        break;
      case 'released':
        releases.push({ key: message.key, startMs: message.sentMs, endMs: message.repliedMs });
        break;
      case 'claim-failed':
        keysWithFailedClaims.add(message.key);
        break;
      case 'own-claim':
        ownClaims[message.status] = (ownClaims[message.status] ?? 0) + 1;
        log(
          `a ${message.tool} claim by ${worker.name} found the key held by its own owner: ${message.status}`,
        );
        break;
      case 'drained':
        worker.onDrained?.();
        break;
    }
  }

  function onWorkerExit(worker: WorkerProcess): void {
    clearTimeout(worker.continueTimer);
    worker.state = 'dead';
    worker.activeBodies.clear();
    renewalsDelayedByDead += worker.renewalsDelayed;
    worker.renewalsDelayed = 0;
    if (worker.killedByUs) killedPids.add(worker.pid);
    else if (!finishing) {
      unexpectedWorkerExits += 1;
      log(
        `worker ${worker.name} exited on its own (${worker.child.exitCode ?? worker.child.signalCode}): ${worker.stderrTail.slice(-3000)}`,
      );
    }
    const orphans = [...worker.open.values()];
    worker.open.clear();
    for (const delivery of orphans) {
      delivery.died = true;
      clearTimeout(delivery.timer);
    }
    // Redeliver what the dead worker held, once per call, to a live worker.
    for (const call of new Set(orphans.map((delivery) => delivery.call))) {
      if (call.final === undefined && !hasOpenDelivery(call)) void deliver(call, 'redeliver');
    }
    if (!finishing && workers[worker.slot] === worker) startWorker(worker.slot);
  }

  function hasOpenDelivery(call: Call): boolean {
    return call.deliveries.some((delivery) => !delivery.answered && !delivery.died);
  }

  function send(worker: WorkerProcess, message: CoordinatorMessage): boolean {
    if (worker.state === 'dead' || !worker.child.connected) return false;
    try {
      worker.child.send(message);
      return true;
    } catch {
      return false;
    }
  }

  /** A live worker that takes calls, preferring the least loaded; waits while none is. */
  async function pickWorker(exclude?: WorkerProcess): Promise<WorkerProcess | undefined> {
    for (;;) {
      if (unexpectedWorkerExits > 8) return undefined;
      const ready = workers.filter((worker): worker is WorkerProcess => worker?.state === 'ready');
      const candidates = ready.filter((worker) => worker !== exclude);
      const pool = candidates.length > 0 ? candidates : ready;
      if (pool.length > 0) {
        pool.sort((a, b) => a.open.size - b.open.size);
        return pool[0];
      }
      if (finishing && workers.every((worker) => worker === undefined || worker.state === 'dead')) {
        return undefined;
      }
      await sleep(10);
    }
  }

  async function deliver(call: Call, reason: DeliveryReason, exclude?: WorkerProcess): Promise<void> {
    const worker = await pickWorker(exclude);
    if (call.final !== undefined) return;
    if (worker === undefined) {
      // No worker can run anything (they keep dying on their own): give the call up as lost.
      call.gaveUp = true;
      call.settle();
      return;
    }
    const delivery: Delivery = {
      id: nextDeliveryId++,
      call,
      worker,
      reason,
      sentMs: Date.now(),
      answered: false,
      died: false,
      timer: undefined,
    };
    call.deliveries.push(delivery);
    worker.open.set(delivery.id, delivery);
    deliveries[reason] += 1;
    const sent = send(worker, {
      t: 'call',
      id: delivery.id,
      callId: call.id,
      tool: call.planKey.tool,
      arguments: call.planKey.arguments,
      runId,
      body: call.planKey.body,
    });
    if (!sent) {
      // The worker died between the pick and the send: its exit handler redelivers.
      worker.open.delete(delivery.id);
      delivery.died = true;
      if (worker.state !== 'dead') worker.state = 'dead';
      if (call.final === undefined && !hasOpenDelivery(call)) void deliver(call, 'redeliver');
      return;
    }
    // A caller that hears nothing asks again elsewhere; the first delivery stays open.
    delivery.timer = setTimeout(() => {
      const open = call.deliveries.filter((each) => !each.answered && !each.died).length;
      if (call.final === undefined && !finishing && open < 3) void deliver(call, 'retry-timeout', worker);
    }, clientTimeoutMs);
  }

  function onAnswer(worker: WorkerProcess, answer: Answer): void {
    const delivery = worker.open.get(answer.id);
    if (delivery === undefined) return;
    worker.open.delete(answer.id);
    clearTimeout(delivery.timer);
    delivery.answered = true;
    const call = delivery.call;
    call.answers.push({ ...answer, sentMs: delivery.sentMs, answeredMs: Date.now() });
    answers[answer.kind] += 1;
    // How long a caller heard nothing before "store unavailable" (no body entered in that
    // delivery): the guard's step budget, seen from outside (issue 30, item 5).
    if (answer.kind === 'unavailable' && answer.ranHere.length === 0) {
      unavailableAnswerMs.push(Date.now() - delivery.sentMs);
    }
    if (answer.kind === 'error') {
      log(`call ${call.id} got an unexpected error: ${answer.errorName}: ${answer.message}`);
    }
    if (TERMINAL_ANSWERS.has(answer.kind)) {
      if (call.final === undefined) {
        call.final = answer;
        call.settle();
      }
      return;
    }
    // pending / unavailable (and unexpected errors): ask again, with a short backoff.
    if (call.final !== undefined || hasOpenDelivery(call)) return;
    call.retries += 1;
    if (call.retries > maxRetries) {
      call.gaveUp = true;
      call.settle();
      return;
    }
    setTimeout(() => void deliver(call, 'retry-pending'), 50 + Math.floor(rng() * 200));
  }

  // ---- faults ----

  function liveWorkers(): WorkerProcess[] {
    return workers.filter(
      (worker): worker is WorkerProcess => worker !== undefined && worker.state !== 'dead',
    );
  }

  function impaired(): number {
    return workers.filter((worker) => worker === undefined || worker.state !== 'ready').length;
  }

  function choose<T>(items: T[]): T | undefined {
    return items.length === 0 ? undefined : items[Math.floor(rng() * items.length)];
  }

  /** A target, preferring workers in the middle of a tool body. */
  function target(states: WorkerProcess['state'][]): WorkerProcess | undefined {
    const candidates = liveWorkers().filter((worker) => states.includes(worker.state));
    return choose(candidates.filter((worker) => worker.activeBodies.size > 0)) ?? choose(candidates);
  }

  // The proxy is held by store freezes and by record losses (which freeze the store while its
  // records are read and forgotten); it thaws when the last holder lets go.
  let freezeHolds = 0;
  const freezeTimers = new Set<NodeJS.Timeout>();
  function holdStore(): () => void {
    if (freezeHolds++ === 0) backend.proxy.freeze();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--freezeHolds === 0) backend.proxy.thaw();
    };
  }
  function thawAll(): void {
    for (const timer of freezeTimers) clearTimeout(timer);
    freezeTimers.clear();
    if (freezeHolds > 0) {
      freezeHolds = 0;
      backend.proxy.thaw();
    }
  }

  /** Keys whose record the store may hold now: delivered in this life, or still in flight. */
  function keysOfThisLife(sinceMs: number): string[] {
    const keys = new Set<string>();
    for (const call of calls) {
      if (
        call.deliveries.some(
          (delivery) => delivery.sentMs >= sinceMs || (!delivery.answered && !delivery.died),
        )
      ) {
        keys.add(call.planKey.key);
      }
    }
    return [...keys];
  }

  async function readRecords(keys: readonly string[]): Promise<Map<string, IdempotencyRecord>> {
    const found = new Map<string, IdempotencyRecord>();
    for (let index = 0; index < keys.length; index += 50) {
      const batch = keys.slice(index, index + 50);
      const read = await Promise.all(batch.map((key) => backend.store.get({ tenant, key })));
      for (const [position, key] of batch.entries()) {
        const record = read[position];
        if (record !== null && record !== undefined) found.set(key, record);
      }
    }
    return found;
  }

  /**
   * The store forgets every record. The proxy is frozen around it so the records read just
   * before (what this life of the store ended with) are exactly what it forgot: what the
   * workers send meanwhile lands in the next life.
   */
  async function loseRecords(): Promise<void> {
    const release = holdStore();
    try {
      // Let what was already forwarded before the freeze be served.
      await sleep(20);
      const previous = losses.at(-1);
      const sinceMs = previous === undefined ? 0 : previous.startMs - 1000;
      const records = await readRecords(keysOfThisLife(sinceMs));
      const draw = rng();
      const how =
        options.store !== 'redis' ? 'flush' : draw < 1 / 3 ? 'restart' : draw < 2 / 3 ? 'evict' : 'flush';
      const startMs = Date.now();
      const what = await backend.loseRecords(how);
      const endMs = Date.now();
      losses.push({ startMs, endMs, records });
      lossKinds[how] = (lossKinds[how] ?? 0) + 1;
      log(
        `${options.store}: record loss ${losses.length}: ${what} (${records.size} records forgotten, ${endMs - startMs} ms)`,
      );
    } finally {
      release();
    }
  }

  async function inject(kind: FaultKind): Promise<boolean> {
    switch (kind) {
      case 'record-loss':
        await loseRecords();
        return true;
      case 'store-freeze': {
        if (freezeHolds > 0) return false;
        const release = holdStore();
        // 0.3-1.6 s: against the 1 s store deadline, about half of them outlast it.
        const frozenMs = Math.floor(300 + rng() * 1300);
        freezesMs.push(frozenMs);
        const timer = setTimeout(() => {
          freezeTimers.delete(timer);
          release();
        }, frozenMs);
        freezeTimers.add(timer);
        return true;
      }
      case 'sigkill': {
        if (impaired() >= 2) return false;
        const worker = target(['ready']);
        if (worker === undefined) return false;
        worker.killedByUs = true;
        worker.child.kill('SIGKILL');
        return true;
      }
      case 'sigstop': {
        if (impaired() >= 2) return false;
        const worker = target(['ready']);
        if (worker === undefined) return false;
        worker.state = 'stopped';
        worker.child.kill('SIGSTOP');
        const pauseMs = Math.floor(leaseMs * (1.3 + rng() * 1.5));
        worker.continueTimer = setTimeout(() => {
          if (worker.state !== 'stopped') return;
          worker.child.kill('SIGCONT');
          worker.state = 'ready';
        }, pauseMs);
        return true;
      }
      case 'connection-kill': {
        const worker = target(['ready', 'stopped']);
        if (worker === undefined) return false;
        const killed = await backend.killConnections(worker.name);
        connectionsKilled += killed;
        return killed > 0;
      }
      case 'renew-delay': {
        const worker = target(['ready']);
        if (worker === undefined) return false;
        return send(worker, {
          t: 'delay-renew',
          delayMs: Math.floor(leaseMs * (1.2 + rng())),
          forMs: leaseMs * 2,
          mode: rng() < 0.5 ? 'send' : 'reply',
        });
      }
    }
  }

  let faultsRunning = true;
  let callsDone = false;
  // Both sides of the pacing: calls wait for their share of faults (below), and faults wait for
  // their share of calls (of the soak's time), so a slow stretch (a frozen store) does not pile
  // up faults that slow the calls further.
  const faultsPlanned = options.faults + 4;
  let dispatched = 0;
  function faultsDue(): number {
    const byCalls = (faultsPlanned * dispatched) / options.calls;
    const byTime =
      options.durationMs === undefined ? 0 : (faultsPlanned * (Date.now() - startedMs)) / options.durationMs;
    return Math.ceil(Math.max(byCalls, byTime)) + 2;
  }
  async function faultLoop(): Promise<void> {
    let turn = Math.floor(rng() * kinds.length);
    while (faultsRunning) {
      await sleep(faultIntervalMs * (0.5 + rng()));
      while (faultsRunning && faultsTotal >= faultsDue() && !callsDone) await sleep(10);
      if (!faultsRunning) break;
      const kind = kinds[turn % kinds.length] as FaultKind;
      // Once every call is answered, a record loss would leave the listing check no record.
      if (callsDone && kind === 'record-loss' && kinds.length > 1) {
        turn += 1;
        continue;
      }
      try {
        if (await inject(kind)) {
          faults[kind] += 1;
          faultsTotal += 1;
          turn += 1;
        }
      } catch (error) {
        log(`fault ${kind} failed: ${(error as Error).message}`);
      }
    }
  }

  // ---- the plan ----

  let keyCounter = 0;
  function newPlanKey(): PlanKey {
    const index = keyCounter++;
    const tool: ToolName = rng() < 0.5 ? EFFECTFUL_TOOL : IDEMPOTENT_TOOL;
    const args = { account: `acct-${index}`, amountCents: 100 + (index % 997) };
    const shape = rng();
    const body: BodyProfile =
      shape < 0.65
        ? { sleepMs: 5 + Math.floor(rng() * 50), ignoreSignal: false }
        : { sleepMs: Math.floor(leaseMs * (0.6 + rng() * 0.9)), ignoreSignal: shape >= 0.85 };
    const planKey: PlanKey = {
      key: idempotencyKey({ tenant, runId, tool, arguments: args }),
      tool,
      arguments: args,
      body,
    };
    planKeys.set(planKey.key, planKey);
    return planKey;
  }

  /** A chunk of calls: every key once, about 40% of them again a little later (a replay). */
  function planChunk(size: number): PlanKey[] {
    const keyCount = Math.max(1, Math.ceil(size / 1.4));
    const slots: { order: number; planKey: PlanKey }[] = [];
    const chunkKeys: PlanKey[] = [];
    for (let index = 0; index < keyCount; index++) {
      const planKey = newPlanKey();
      chunkKeys.push(planKey);
      slots.push({ order: index, planKey });
    }
    for (let extra = keyCount; extra < size; extra++) {
      const index = Math.floor(rng() * keyCount);
      slots.push({ order: index + 0.5 + rng() * 120, planKey: chunkKeys[index] as PlanKey });
    }
    slots.sort((a, b) => a.order - b.order);
    return slots.map((slot) => slot.planKey);
  }

  function newCall(planKey: PlanKey): Call {
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const call: Call = {
      id: `c${calls.length + 1}`,
      planKey,
      twin: rng() < 0.15,
      deliveries: [],
      answers: [],
      final: undefined,
      retries: 0,
      gaveUp: false,
      settle,
      settled,
    };
    calls.push(call);
    return call;
  }

  // ---- go ----

  try {
    for (let slot = 0; slot < workerCount; slot++) startWorker(slot);
    await Promise.all(workers.map((worker) => worker?.ready));
    if (workers.some((worker) => worker?.state !== 'ready')) {
      const broken = workers.find((worker) => worker?.state !== 'ready');
      throw new Error(`a worker did not start: ${broken?.stderrTail.slice(-2000)}`);
    }
    log(`${options.store}: ${workerCount} workers ready (seed ${seed}, lease ${leaseMs} ms)`);

    const faultLoopDone = faultLoop();
    const open = new Set<Promise<void>>();
    const deadlineMs = options.durationMs === undefined ? undefined : startedMs + options.durationMs;
    let lastProgressMs = Date.now();
    const moreCalls = () =>
      dispatched < options.calls || (deadlineMs !== undefined && Date.now() < deadlineMs);
    while (moreCalls()) {
      for (const planKey of planChunk(Math.min(1000, Math.max(options.calls - dispatched, 200)))) {
        if (!moreCalls()) break;
        while (open.size >= concurrency) await Promise.race(open);
        // Pace the calls so the faults land over the whole run, not after it.
        const target = options.durationMs === undefined ? options.calls : Number.POSITIVE_INFINITY;
        while (faultsTotal < Math.ceil((faultsPlanned * dispatched) / target)) await sleep(10);
        const call = newCall(planKey);
        dispatched += 1;
        const settled = call.settled.then(() => {
          open.delete(settled);
        });
        open.add(settled);
        // A twin: the same call delivered to a second worker at once (an at-least-once queue).
        void deliver(call, 'first').then(() =>
          call.twin ? deliver(call, 'twin', call.deliveries[0]?.worker) : undefined,
        );
        if (Date.now() - lastProgressMs > 5000) {
          lastProgressMs = Date.now();
          log(`${options.store}: ${dispatched} calls, ${faultsTotal} faults, ${events.length} events`);
        }
      }
    }
    await Promise.all(open);
    callsDone = true;
    // Faults stop once every call is answered; a soak with few calls still gets its faults.
    while (faultsTotal < options.faults) await sleep(20);
    faultsRunning = false;
    await faultLoopDone;
    finishing = true;
    thawAll();

    // Wake stopped workers; wait for every delivery to a live worker to be answered.
    for (const worker of liveWorkers()) {
      if (worker.state === 'stopped') {
        clearTimeout(worker.continueTimer);
        worker.child.kill('SIGCONT');
        worker.state = 'ready';
      }
    }
    await Promise.all(liveWorkers().map((worker) => worker.ready));
    const answerDeadline = Date.now() + 30_000;
    while (Date.now() < answerDeadline && liveWorkers().some((worker) => worker.open.size > 0)) {
      await sleep(20);
    }
    const hungDeliveries = liveWorkers().reduce((sum, worker) => sum + worker.open.size, 0);
    // Let every body (a superseded one may still be running) end and its late result be recorded.
    await Promise.all(
      liveWorkers().map(
        (worker) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 25_000);
            worker.onDrained = () => {
              clearTimeout(timer);
              resolve();
            };
            if (!send(worker, { t: 'drain' })) resolve();
          }),
      ),
    );

    const ledger = await backend.ledger.readAll();
    const records = new Map<string, IdempotencyRecord | null>();
    const keyList = [...planKeys.keys()];
    for (let index = 0; index < keyList.length; index += 50) {
      const batch = keyList.slice(index, index + 50);
      const read = await Promise.all(batch.map((key) => backend.store.get({ tenant, key })));
      for (const [position, key] of batch.entries()) records.set(key, read[position] ?? null);
    }
    // The operator's listing, read after the records, must agree with them (index-check.ts).
    const index = checkIndex(records, await listEveryRecord(backend.store, tenant));
    log(
      `index: ${index.listed} listed, ${index.records} records by get; missing ${index.missing}, phantom ${index.phantom}, repeated ${index.repeated}, disagreeing ${index.disagreeing}`,
    );
    // A release whose reply was lost (the store froze, the connection broke) may have landed all
    // the same: the workers never hear of it. Where the store logs its deletions, the checks use
    // that log, which holds every release that landed and only those.
    const deletions = backend.readDeletions === undefined ? undefined : await backend.readDeletions();
    if (deletions !== undefined)
      log(
        `releases: ${releases.length} answered released, ${deletions.length} deletions logged by the store`,
      );
    const history: History = {
      maxAttempts,
      keys: new Map([...planKeys.values()].map((planKey) => [planKey.key, planKey.tool])),
      calls: calls.map((call) => ({ id: call.id, key: call.planKey.key, answers: call.answers })),
      ledger,
      records,
      events,
      bodyEnds,
      bodyEndTimes,
      killedPids,
      hungDeliveries,
      losses,
      releases: deletions ?? releases,
    };
    const checks = checkHistory(history);
    dumpHistory(options.store, runTag, history, checks.violations.length > 0, log);
    const renewalsDelayed =
      renewalsDelayedByDead + liveWorkers().reduce((sum, worker) => sum + worker.renewalsDelayed, 0);
    return {
      store: options.store,
      calls: calls.length,
      faults,
      executions: checks.executions,
      duplicates: checks.duplicates,
      lost: checks.lost,
      staleFenced: checks.staleFenced,
      durationMs: Date.now() - startedMs,
      faultsTotal,
      keys: planKeys.size,
      deliveries,
      answers,
      renewalsDelayed,
      connectionsKilled,
      recordLosses: lossKinds,
      freezes: {
        count: freezesMs.length,
        totalMs: freezesMs.reduce((a, b) => a + b, 0),
        longerThanDeadline: freezesMs.filter((ms) => ms > operationTimeoutMs).length,
        operationTimeoutMs,
        unavailableAnswers: latencies(unavailableAnswerMs),
      },
      kinds,
      ownClaims,
      indeterminateUnexecutedAfterFailedClaim: [...records].filter(
        ([key, record]) =>
          record?.state === 'indeterminate' &&
          keysWithFailedClaims.has(key) &&
          !ledger.some((entry) => entry.key === key),
      ).length,
      workersStarted,
      unexpectedWorkerExits,
      seed,
      checks: checks.detail,
      index,
      violations: [...checks.violations, ...index.violations],
    };
  } finally {
    finishing = true;
    faultsRunning = false;
    thawAll();
    await shutdownWorkers(workers);
    await backend.cleanup().catch((error: unknown) => log(`cleanup failed: ${(error as Error).message}`));
  }
}

async function shutdownWorkers(workers: (WorkerProcess | undefined)[]): Promise<void> {
  await Promise.all(
    workers.map(async (worker) => {
      if (worker === undefined || worker.state === 'dead') return;
      clearTimeout(worker.continueTimer);
      worker.child.kill('SIGCONT');
      try {
        worker.child.send({ t: 'exit' } satisfies CoordinatorMessage);
      } catch {
        // Not connected any more.
      }
      const exited = await Promise.race([worker.exited.then(() => true), sleep(3000).then(() => false)]);
      if (!exited) {
        worker.child.kill('SIGKILL');
        await worker.exited;
      }
    }),
  );
}

// ---- reporting ----

function latencies(values: readonly number[]): {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
} {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { count: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted.at(-1) ?? 0 };
}

/** One line per store, for the test output and the soak. */
export function summarize(report: FaultRunReport): string {
  const faults = report.kinds.map((kind) => `${kind} ${report.faults[kind]}`).join(', ');
  const checks = report.checks;
  return (
    `${report.store}: ${report.calls} calls on ${report.keys} keys ` +
    `(${Object.values(report.deliveries).reduce((a, b) => a + b, 0)} deliveries), ` +
    `${report.faultsTotal} faults (${faults}), ${report.executions} executions, ` +
    `duplicates ${report.duplicates} (in one call ${checks.duplicatesInOneCall}, per key per life ` +
    `${checks.duplicatesPerLife}), lost ${report.lost}, staleFenced ${report.staleFenced}, ` +
    `${checks.recordLosses} record losses (${checks.keysReexecutedAfterLoss} keys re-executed after one), ` +
    `"unavailable" answered in p50 ${report.freezes.unavailableAnswers.p50Ms} / p99 ` +
    `${report.freezes.unavailableAnswers.p99Ms} / max ${report.freezes.unavailableAnswers.maxMs} ms ` +
    `(operationTimeoutMs ${report.freezes.operationTimeoutMs}), ` +
    `${(report.durationMs / 1000).toFixed(1)} s`
  );
}

/**
 * Merges `report` into test/faults/last-run.json (an object keyed by store), under a lock
 * directory so the two store files, run in parallel, do not overwrite each other.
 */
export async function writeLastRun(report: FaultRunReport, file = lastRunFile): Promise<void> {
  const lock = `${file}.lock`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) {
        // A lock left by a killed run: take it over.
        rmdirSync(lock);
        continue;
      }
      await sleep(25);
    }
  }
  try {
    let existing: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
        existing = parsed as Record<string, unknown>;
      }
    } catch {
      // No previous run (or an unreadable one): start afresh.
    }
    existing[report.store] = {
      store: report.store,
      calls: report.calls,
      faults: report.faults,
      executions: report.executions,
      duplicates: report.duplicates,
      lost: report.lost,
      staleFenced: report.staleFenced,
      durationMs: report.durationMs,
      finishedAt: new Date().toISOString(),
      keys: report.keys,
      deliveries: report.deliveries,
      answers: report.answers,
      renewalsDelayed: report.renewalsDelayed,
      connectionsKilled: report.connectionsKilled,
      recordLosses: report.recordLosses,
      freezes: report.freezes,
      kinds: report.kinds,
      ownClaims: report.ownClaims,
      indeterminateUnexecutedAfterFailedClaim: report.indeterminateUnexecutedAfterFailedClaim,
      workersStarted: report.workersStarted,
      seed: report.seed,
      checks: report.checks,
    };
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(existing, null, 2)}\n`);
    renameSync(temporary, file);
  } finally {
    rmdirSync(lock);
  }
}
