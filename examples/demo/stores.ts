// Where the demo keeps its records: the embedded MemoryStore by default, or a real Redis or
// PostgreSQL given with `--store redis://…` / `--store postgres://…`. A real store gets a random
// key prefix (Redis) or schema (PostgreSQL) that is removed when the demo ends.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type GuardEvent, type IdempotencyStore, MemoryStore } from '@toolfence/core';
import { PostgresStore } from '@toolfence/stores/postgres';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { type Ledger, MemoryLedger, RedisLedger } from './provider.js';
import type { KilledWorker, KilledWorkerSpec } from './scenarios.js';
import { EVENT, IN_BODY, type WorkerArguments } from './worker-protocol.js';

export const START_REDIS =
  'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no';
export const START_POSTGRES = 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start';

export interface DemoStore {
  /** What the header shows, e.g. `RedisStore redis://127.0.0.1:6379 (prefix tf-demo-…)`. */
  readonly label: string;
  readonly store: IdempotencyStore;
  newLedger(name: string): Promise<Ledger>;
  readonly runKilledWorker?: (spec: KilledWorkerSpec) => Promise<KilledWorker>;
  /** Close connections and remove everything the demo wrote. */
  close(): Promise<void>;
}

/** A store the user can act on: the message says what to start. */
export class StoreUnreachable extends Error {
  override name = 'StoreUnreachable';
}

export async function openStore(spec: string | undefined): Promise<DemoStore> {
  if (spec === undefined || spec === 'memory') {
    return {
      label: 'MemoryStore (embedded, this process)',
      store: new MemoryStore(),
      newLedger: async () => new MemoryLedger(),
      close: async () => undefined,
    };
  }
  if (spec.startsWith('redis://') || spec.startsWith('rediss://')) return openRedis(spec);
  if (spec.startsWith('postgres://') || spec.startsWith('postgresql://')) return openPostgres(spec);
  throw new Error(`--store must be memory, redis://host:port or postgres://user@host:port/db, got "${spec}"`);
}

async function openRedis(url: string): Promise<DemoStore> {
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    client.disconnect();
    throw new StoreUnreachable(
      `Redis is not reachable at ${url} (${(error as Error).message}).\n  Start it with: ${START_REDIS}`,
    );
  }
  const prefix = `tf-demo-${randomBytes(4).toString('hex')}`;
  const store = new RedisStore({ client, prefix });
  return {
    label: `RedisStore ${url} (key prefix ${prefix}, removed at exit)`,
    store,
    newLedger: async (name) => new RedisLedger(client, `${prefix}:${name}`),
    runKilledWorker: (spec) => runKilledWorker({ redisUrl: url, prefix, ...spec }),
    close: async () => {
      await store.close();
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await client.unlink(...keys);
      } while (cursor !== '0');
      await client.quit();
    },
  };
}

async function openPostgres(url: string): Promise<DemoStore> {
  const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: 5000, max: 10 });
  pool.on('error', () => undefined);
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await pool.end().catch(() => undefined);
    const remedy =
      (error as { code?: unknown }).code === '3D000'
        ? `Create the database with: createdb -h 127.0.0.1 -U postgres ${new URL(url).pathname.slice(1)}`
        : `Start it with: ${START_POSTGRES}`;
    throw new StoreUnreachable(
      `PostgreSQL is not reachable at ${url} (${(error as Error).message}).\n  ${remedy}`,
    );
  }
  const schema = `tf_demo_${randomBytes(4).toString('hex')}`;
  const store = new PostgresStore({ pool, schema });
  await store.ensureSchema();
  return {
    label: `PostgresStore ${url.replace(/:[^:@/]*@/, ':***@')} (schema ${schema}, dropped at exit)`,
    store,
    newLedger: async () => new MemoryLedger(),
    close: async () => {
      await store.close();
      await pool.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      await pool.end();
    },
  };
}

/**
 * Start worker A as a child process (the same tsx and export condition as the demo), wait until
 * both of its calls are inside the provider, SIGKILL it, and return what it reported.
 */
async function runKilledWorker(args: WorkerArguments): Promise<KilledWorker> {
  // `node --import tsx`, not the tsx CLI: the CLI runs the script in a grandchild that a SIGKILL
  // of the CLI would leave running (still renewing its lease).
  const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const worker = fileURLToPath(new URL('./worker.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    ['--import', tsxLoader, '--conditions=@toolfence/source', worker, JSON.stringify(args)],
    // stdin stays open: the worker exits by itself when it closes (should this process die first).
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const events: GuardEvent[] = [];
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => {
    child.on('exit', (code, signal) => resolve(signal ?? code));
  });
  const inBody = new Promise<void>((resolve, reject) => {
    let buffered = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        if (line.startsWith(EVENT)) events.push(JSON.parse(line.slice(EVENT.length)) as GuardEvent);
        else if (line === IN_BODY) resolve();
      }
    });
    void exited.then((how) => reject(new Error(`worker process exited early (${how}):\n${stderr}`)));
    setTimeout(
      () => reject(new Error(`worker process did not reach the tool bodies in 30 s:\n${stderr}`)),
      30_000,
    ).unref();
  });
  try {
    await inBody;
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  child.stdin.destroy();
  const how = await exited;
  if (how !== 'SIGKILL') throw new Error(`worker process ended with ${how}, not SIGKILL:\n${stderr}`);
  return { pid: child.pid ?? 0, events };
}
