// One worker process of the fault suite: runs guarded tool calls sent by the coordinator
// (harness.ts) over IPC, against a real RedisStore or PostgresStore, and reports every answer,
// guard event and body start/end back. Started as
//   node --import tsx --conditions=@toolfence/source test/faults/worker.ts
// with its WorkerConfig as JSON in the first argument. The coordinator SIGKILLs it, SIGSTOPs it, kills
// its store connection and tells it to delay its lease renewals.
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type ClaimOptions,
  type ClaimResult,
  currentToolCall,
  Guard,
  type GuardEvent,
  Idempotency,
  type IdempotencyPolicy,
  type IdempotencyStore,
  type RecordRef,
  ToolfenceError,
} from '@toolfence/core';
import { DynamoDBStore } from '@toolfence/stores/dynamodb';
import { PostgresStore } from '@toolfence/stores/postgres';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { emulatorConfig } from '../support/dynalite.js';
import { type Ledger, postgresLedger, redisLedger } from './ledger.js';
import {
  type Answer,
  type BodyProfile,
  type CallCommand,
  type CoordinatorMessage,
  EFFECTFUL_TOOL,
  IDEMPOTENT_TOOL,
  type ToolValue,
  type WorkerConfig,
  type WorkerMessage,
} from './protocol.js';

function loadConfig(): WorkerConfig {
  const parsed = JSON.parse(process.argv[2] ?? 'null') as WorkerConfig | null;
  if (parsed === null || typeof process.send !== 'function') {
    console.error('worker.ts is started by test/faults/harness.ts (needs its config argument and IPC)');
    process.exit(2);
  }
  return parsed;
}
const config = loadConfig();

function send(message: WorkerMessage): void {
  try {
    process.send?.(message);
  } catch {
    // The coordinator is gone; the 'disconnect' handler ends this process.
  }
}

// A worker must never die of its own accord: only the coordinator's faults kill it.
process.on('unhandledRejection', (reason) => {
  console.error(`[worker ${config.connectionName}] unhandled rejection:`, reason);
});
process.on('disconnect', () => process.exit(0));

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---- the store, behind a proxy that can hold renewals back and counts operations in flight ----

/**
 * The window of the last claim that acquired each `key#fence` here: sent and replied, on
 * Date.now() (the coordinator compares it with the times of its record-loss faults).
 */
const acquiredClaims = new Map<string, { sentMs: number; repliedMs: number }>();

let delayWindow: { untilMs: number; delayMs: number; mode: 'send' | 'reply' } | undefined;
let renewalsDelayed = 0;
let storeOperationsInFlight = 0;

function faultyStore(store: IdempotencyStore): IdempotencyStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const method = value.bind(target) as (...args: unknown[]) => Promise<unknown>;
      if (property === 'waitForSettle' || property === 'close') return method;
      return async (...args: unknown[]) => {
        storeOperationsInFlight += 1;
        try {
          const window = delayWindow;
          const delay =
            property === 'renew' && window !== undefined && Date.now() < window.untilMs ? window : undefined;
          if (delay !== undefined) {
            renewalsDelayed += 1;
            send({ t: 'renew-delayed' });
          }
          if (delay?.mode === 'send') await sleep(delay.delayMs);
          let result: unknown;
          const sentMs = Date.now();
          try {
            result = await method(...args);
          } catch (error) {
            // A claim that failed may still have landed on the store (its reply was lost).
            if (property === 'claim') send({ t: 'claim-failed', key: (args[0] as RecordRef).key });
            throw error;
          }
          if (property === 'release' && (result as { status?: string }).status === 'released') {
            send({
              t: 'released',
              key: (args[0] as RecordRef).key,
              fence: (args[1] as { fence: number }).fence,
              sentMs,
              repliedMs: Date.now(),
            });
          }
          if (property === 'claim') {
            const claim = result as ClaimResult;
            if (claim.status === 'acquired') {
              const id = `${(args[0] as RecordRef).key}#${claim.fence}`;
              acquiredClaims.delete(id);
              acquiredClaims.set(id, { sentMs, repliedMs: Date.now() });
              // Bounded: a body starts right after its claim's reply, so old windows are not needed.
              if (acquiredClaims.size > 5000)
                acquiredClaims.delete(acquiredClaims.keys().next().value as string);
            }
            noticeOwnClaim(args[1] as ClaimOptions, claim);
          }
          if (delay?.mode === 'reply') await sleep(delay.delayMs);
          return result;
        } finally {
          storeOperationsInFlight -= 1;
        }
      };
    },
  });
}

/**
 * Owners are unique per claim call, so a claim that finds the record held by ITS OWN owner (busy,
 * or already settled under it) means one claim ran twice on the store: a command the client
 * library resent after a dropped connection. The guard then waits for itself.
 */
function noticeOwnClaim(options: ClaimOptions, result: ClaimResult): void {
  if (result.status === 'acquired' || result.record.owner !== options.owner) return;
  send({ t: 'own-claim', status: result.status, tool: options.tool });
}

// The store deadline under both names: `operationTimeoutMs` (RULES S5, every remote store) and
// RedisStore's `commandTimeoutMs`. A store that does not know one of the names ignores it.
const deadlines: Record<string, number> = {
  operationTimeoutMs: config.operationTimeoutMs,
  commandTimeoutMs: config.operationTimeoutMs,
};

let store: IdempotencyStore;
let ledger: Ledger;
let closeStore: () => Promise<void>;
if (config.store === 'redis') {
  // Default reconnect and resend behaviour of ioredis: what a user gets.
  const client = new Redis(config.url, { connectionName: config.connectionName });
  client.on('error', () => {});
  const redisStore = new RedisStore({ client, prefix: config.namespace, ...deadlines });
  store = redisStore;
  ledger = redisLedger(config.ledgerUrl, config.namespace, config.ledgerConnectionName);
  closeStore = async () => {
    await redisStore.close();
    client.disconnect();
  };
} else if (config.store === 'dynamodb') {
  // The store's own client (maxAttempts 3, request timeouts within the deadline): what a user gets.
  const dynamo = new DynamoDBStore({
    clientConfig: emulatorConfig(config.url),
    tableName: config.namespace,
    operationTimeoutMs: config.operationTimeoutMs,
  });
  store = dynamo;
  ledger = redisLedger(config.ledgerUrl, config.namespace, config.ledgerConnectionName);
  closeStore = () => dynamo.close();
} else {
  const pool = new pg.Pool({ connectionString: config.url, max: 6, application_name: config.connectionName });
  // A terminated idle connection must not crash the worker.
  pool.on('error', () => {});
  const postgresStore = new PostgresStore({
    pool,
    schema: config.namespace,
    autoCleanup: false,
    ...deadlines,
  });
  store = postgresStore;
  ledger = postgresLedger(config.ledgerUrl, config.namespace, config.ledgerConnectionName);
  closeStore = async () => {
    await postgresStore.close();
    await pool.end();
  };
}

/** The delivery each guard.run runs for, so its events name it (timers and promises keep it). */
const deliveryOfCall = new AsyncLocalStorage<number>();

const onEvent = (event: GuardEvent) => {
  send({
    delivery: deliveryOfCall.getStore() ?? 0,
    t: 'event',
    type: event.type,
    key: event.key,
    fence: event.fence,
    attempt: event.attempt,
    ...(event.recorded === undefined ? {} : { recorded: event.recorded }),
    ...(event.error === undefined ? {} : { errorType: event.error.type }),
    timeMs: Date.now(),
  });
};

const guard = new Guard({ store: faultyStore(store), tenant: config.tenant, onEvent });

const common = {
  leaseMs: config.leaseMs,
  heartbeatMs: config.heartbeatMs,
  retentionMs: config.retentionMs,
  maxAttempts: config.maxAttempts,
};
const policies: Record<string, IdempotencyPolicy> = {
  [EFFECTFUL_TOOL]: { kind: Idempotency.EFFECTFUL, ...common },
  [IDEMPOTENT_TOOL]: { kind: Idempotency.IDEMPOTENT, ...common },
};

// ---- tool bodies ----

let executions = 0;
let activeBodies = 0;
let activeCalls = 0;

/** Sleeps `ms`; rejects with the signal's own reason when it aborts (the guard recognises it). */
function work(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function makeBody(command: CallCommand, ranHere: string[]) {
  const profile: BodyProfile = command.body;
  return async (): Promise<ToolValue> => {
    const context = currentToolCall();
    if (context === undefined) throw new Error('tool body ran without a call context');
    const execId = `${process.pid}.${++executions}`;
    const claimWindow = acquiredClaims.get(`${context.idempotencyKey}#${context.fence}`);
    ranHere.push(execId);
    activeBodies += 1;
    let returned = false;
    try {
      send({ t: 'body', phase: 'start', execId, key: context.idempotencyKey, fence: context.fence });
      // The effect: written before the work, so a body killed mid-work still counts.
      await ledger.append({
        execId,
        key: context.idempotencyKey,
        tool: command.tool,
        fence: context.fence,
        attempt: context.attempt,
        pid: process.pid,
        worker: config.connectionName,
        timeMs: Date.now(),
        delivery: command.id,
        // No window seen (cannot happen: every claim goes through faultyStore): the widest one.
        claimSentMs: claimWindow?.sentMs ?? 0,
        claimRepliedMs: claimWindow?.repliedMs ?? Date.now(),
      });
      await work(profile.sleepMs, profile.ignoreSignal ? undefined : context.signal);
      returned = true;
      return { execId, fence: context.fence, pid: process.pid };
    } finally {
      activeBodies -= 1;
      send({
        t: 'body',
        phase: 'end',
        execId,
        key: context.idempotencyKey,
        fence: context.fence,
        returned,
        timeMs: Date.now(),
      });
    }
  };
}

function describeFailure(id: number, error: unknown, ranHere: string[]): Answer {
  const errorName = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  const fence = (error as { fence?: unknown }).fence;
  const base = { t: 'answer' as const, id, errorName, message, ranHere };
  const withFence = typeof fence === 'number' ? { fence } : {};
  if (ToolfenceError.hasCode(error, 'INDETERMINATE_OUTCOME')) {
    return { ...base, ...withFence, kind: 'indeterminate' };
  }
  if (ToolfenceError.hasCode(error, 'EXECUTION_ABANDONED'))
    return { ...base, ...withFence, kind: 'abandoned' };
  if (ToolfenceError.hasCode(error, 'OUTCOME_PENDING')) return { ...base, kind: 'pending' };
  if (ToolfenceError.hasCode(error, 'STORE_UNAVAILABLE')) return { ...base, kind: 'unavailable' };
  return { ...base, kind: 'error' };
}

async function handleCall(command: CallCommand): Promise<void> {
  activeCalls += 1;
  const ranHere: string[] = [];
  let answer: Answer;
  try {
    const policy = policies[command.tool];
    if (policy === undefined) throw new Error(`unknown tool ${command.tool}`);
    const value = await deliveryOfCall.run(command.id, () =>
      guard.run(
        {
          tool: command.tool,
          arguments: command.arguments,
          runId: command.runId,
          callId: command.callId,
          policy,
        },
        makeBody(command, ranHere),
      ),
    );
    answer = {
      t: 'answer',
      id: command.id,
      kind: ranHere.includes(value.execId) ? 'completed' : 'deduplicated',
      value,
      ranHere,
    };
  } catch (error) {
    answer = describeFailure(command.id, error, ranHere);
  } finally {
    activeCalls -= 1;
  }
  send(answer);
}

/** Resolves once no call, body or store operation (a late result being recorded) is left. */
async function drain(): Promise<void> {
  const deadline = Date.now() + 20_000;
  let quietSince = 0;
  while (Date.now() < deadline) {
    const busy = activeCalls > 0 || activeBodies > 0 || storeOperationsInFlight > 0;
    if (busy) quietSince = 0;
    else if (quietSince === 0) quietSince = Date.now();
    else if (Date.now() - quietSince >= 100) return;
    await sleep(20);
  }
}

process.on('message', (message: CoordinatorMessage) => {
  switch (message.t) {
    case 'call':
      void handleCall(message);
      break;
    case 'delay-renew':
      delayWindow = { untilMs: Date.now() + message.forMs, delayMs: message.delayMs, mode: message.mode };
      break;
    case 'drain':
      void drain().then(() => send({ t: 'drained', renewalsDelayed }));
      break;
    case 'exit':
      void Promise.allSettled([closeStore(), ledger.close()]).then(() => process.exit(0));
      break;
  }
});

// Ready once the store answers (a Postgres pool and a Redis client connect lazily otherwise).
async function warmUp(): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      await store.get({ tenant: config.tenant, key: '0'.repeat(64) });
      return;
    } catch (error) {
      if (tries > 50) throw error;
      await sleep(100);
    }
  }
}
warmUp().then(
  () => send({ t: 'ready', pid: process.pid }),
  (error: unknown) => {
    console.error(`[worker ${config.connectionName}] store not reachable:`, error);
    process.exit(3);
  },
);
