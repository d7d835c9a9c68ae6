// Where the demo keeps its records: the embedded MemoryStore by default, or a real Redis,
// PostgreSQL, SQLite file or DynamoDB given with `--store redis://…` / `--store postgres://…` /
// `--store sqlite:./file.db` / `--store dynamodb:http://127.0.0.1:4567` (an endpoint, e.g.
// dynalite) or `--store dynamodb:eu-west-1` (a region, the default AWS credentials). A real store
// gets a random key prefix (Redis), schema (PostgreSQL) or table (SQLite, DynamoDB) that is
// removed when the demo ends.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  DeleteTableCommand,
  DynamoDBClient,
  type DynamoDBClientConfig,
  ListTablesCommand,
} from '@aws-sdk/client-dynamodb';
import { type GuardEvent, type IdempotencyStore, MemoryStore } from '@toolfence/core';
import { DynamoDBStore } from '@toolfence/stores/dynamodb';
import { PostgresStore } from '@toolfence/stores/postgres';
import { RedisStore } from '@toolfence/stores/redis';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { type Ledger, MemoryLedger, RedisLedger, SQLiteLedger } from './provider.js';
import type { KilledWorker, KilledWorkerSpec } from './scenarios.js';
import { quoteSqliteName } from './sqlite-names.js';
import { EVENT, IN_BODY, type WorkerArguments } from './worker-protocol.js';

export const START_REDIS =
  'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no';
export const START_POSTGRES = 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start';
export const START_DYNALITE = 'npx dynalite --host 127.0.0.1 --port 4567 --createTableMs 0 &';

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
  if (spec.startsWith('sqlite:') && spec.length > 'sqlite:'.length)
    return openSqlite(spec.slice('sqlite:'.length));
  if (spec.startsWith('dynamodb:') && spec.length > 'dynamodb:'.length)
    return openDynamo(spec.slice('dynamodb:'.length));
  throw new Error(
    `--store must be memory, redis://host:port, postgres://user@host:port/db, sqlite:./file.db or dynamodb:<endpoint URL or region>, got "${spec}"`,
  );
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
    runKilledWorker: (spec) => runKilledWorker({ store: { kind: 'redis', url, prefix }, ...spec }),
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

async function openSqlite(file: string): Promise<DemoStore> {
  const path = resolve(file);
  if (!existsSync(dirname(path))) {
    throw new StoreUnreachable(
      `the directory of ${file} does not exist.\n  Create it with: mkdir -p ${dirname(path)}`,
    );
  }
  const created = !existsSync(path);
  const table = `tf_demo_${randomBytes(4).toString('hex')}`;
  const store = new SQLiteStore({ path, table });
  let db: Database.Database;
  try {
    await store.ensureSchema();
    db = new Database(path, { timeout: 5_000 });
  } catch (error) {
    await store.close();
    throw new StoreUnreachable(`SQLite cannot use ${file} (${(error as Error).message})`);
  }
  const ledgerTable = quoteSqliteName(`${table}_ledger`);
  SQLiteLedger.create(db, ledgerTable);
  return {
    label: `SQLiteStore ${file} (table ${table}, dropped at exit${created ? '; the file is removed' : ''})`,
    store,
    newLedger: async (name) => new SQLiteLedger(db, ledgerTable, name),
    runKilledWorker: (spec) => runKilledWorker({ store: { kind: 'sqlite', path, table }, ...spec }),
    close: async () => {
      await store.close();
      for (const name of [table, `${table}_resolutions`, `${table}_migrations`, `${table}_ledger`]) {
        db.exec(`DROP TABLE IF EXISTS ${quoteSqliteName(name)}`);
      }
      db.close();
      if (created) for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
    },
  };
}

/**
 * DynamoDB at an endpoint URL (an emulator such as dynalite: static demo credentials) or in an
 * AWS region (the SDK's default credentials).
 */
async function openDynamo(where: string): Promise<DemoStore> {
  const isEndpoint = /^https?:\/\//.test(where);
  const config: DynamoDBClientConfig = isEndpoint
    ? { endpoint: where, region: 'us-east-1', credentials: { accessKeyId: 'demo', secretAccessKey: 'demo' } }
    : { region: where };
  const admin = new DynamoDBClient({ ...config, maxAttempts: 1 });
  try {
    await admin.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: AbortSignal.timeout(5_000) });
  } catch (error) {
    admin.destroy();
    throw new StoreUnreachable(
      `DynamoDB is not reachable at ${where} (${(error as Error).message}).${isEndpoint ? `\n  Start an emulator with: ${START_DYNALITE}` : ''}`,
    );
  }
  const tableName = `tf-demo-${randomBytes(4).toString('hex')}`;
  const store = new DynamoDBStore({ clientConfig: config, tableName });
  await store.ensureSchema();
  return {
    label: `DynamoDBStore ${where} (table ${tableName}, deleted at exit)`,
    store,
    newLedger: async () => new MemoryLedger(),
    close: async () => {
      await store.close();
      await admin.send(new DeleteTableCommand({ TableName: tableName }));
      admin.destroy();
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
