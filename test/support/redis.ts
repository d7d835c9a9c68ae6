// The Redis service for tests, the fault suite and the benchmark: the shared Redis (REDIS_URL)
// checked before use, random key prefixes and their cleanup, and a throwaway Redis Cluster of
// private redis-servers (redis-server.ts).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { Cluster, type ClusterNode, Redis, type RedisOptions } from 'ioredis';
import { freePort, type RedisServer, startRedisServer } from './redis-server.js';
import { ServiceMissingError } from './service-missing-error.js';

export { freePort, type RedisServer, startRedisServer } from './redis-server.js';

const execFileAsync = promisify(execFile);

export const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The command that starts the Redis these tests expect (named in every "Redis missing" failure). */
export const startRedisCommand =
  'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log';

/** A key prefix no other test file uses. */
export function randomPrefix(label = 'test'): string {
  return `tf-${label}-${randomBytes(6).toString('hex')}`;
}

/**
 * Connects to REDIS_URL and checks it answers. A missing Redis FAILS the test file (never skips)
 * with a message naming the command that starts it.
 */
export async function connectRedis(options: RedisOptions = {}): Promise<Redis> {
  const client = new Redis(redisUrl, { lazyConnect: true, retryStrategy: () => null, ...options });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    client.disconnect();
    throw new ServiceMissingError(
      `Redis is not reachable at ${redisUrl} (${(error as Error).message}). ` +
        `Set REDIS_URL, or start it with: ${startRedisCommand}`,
      { cause: error },
    );
  }
  // Tests that create a client want it to reconnect normally after the check.
  client.options.retryStrategy = options.retryStrategy ?? ((times: number) => Math.min(times * 50, 500));
  return client;
}

/** Deletes every key under `prefix` on every master of `client`; returns how many. */
export async function deletePrefix(client: Redis | Cluster, prefix: string): Promise<number> {
  const cluster = client instanceof Cluster;
  const nodes = cluster ? client.nodes('master') : [client];
  const pattern = `${prefix.replace(/[\\*?[\]]/g, '\\$&')}*`;
  let deleted = 0;
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      // One UNLINK a batch; a cluster node refuses keys of several slots in one command.
      if (!cluster && keys.length > 0) deleted += await node.unlink(...keys);
      else for (const key of keys) deleted += await node.unlink(key);
    } while (cursor !== '0');
  }
  return deleted;
}

/** Every key under `prefix` (on every master). */
export async function keysUnder(client: Redis | Cluster, prefix: string): Promise<string[]> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  const pattern = `${prefix.replace(/[\\*?[\]]/g, '\\$&')}*`;
  const found: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return [...new Set(found)].sort();
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: lastError });
}

export interface RedisClusterUnderTest {
  readonly nodes: ClusterNode[];
  /** Stops the servers this helper started (none when REDIS_CLUSTER_NODES was given). */
  stop(): Promise<void>;
}

/**
 * A 3-master Redis Cluster on loopback: the one named by REDIS_CLUSTER_NODES
 * (`host:port,host:port,...`), or one started here from the redis-server binary.
 */
export async function startRedisCluster(): Promise<RedisClusterUnderTest> {
  const given = process.env.REDIS_CLUSTER_NODES;
  if (given) {
    const nodes = given.split(',').map((entry) => {
      const [host, port] = entry.trim().split(':');
      return { host: host ?? '127.0.0.1', port: Number(port) };
    });
    return { nodes, stop: async () => {} };
  }
  const servers: RedisServer[] = [];
  try {
    for (let index = 0; index < 3; index++) {
      const port = await freePort();
      servers.push(
        await startRedisServer({
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            `nodes-${port}.conf`,
            '--cluster-node-timeout',
            '5000',
          ],
          port,
        }),
      );
    }
    await execFileAsync('redis-cli', [
      '--cluster',
      'create',
      ...servers.map((server) => `127.0.0.1:${server.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    await waitFor(
      async () => {
        for (const server of servers) {
          const probe = new Redis({ port: server.port, lazyConnect: true, retryStrategy: () => null });
          probe.on('error', () => {});
          try {
            await probe.connect();
            const info = await probe.cluster('INFO');
            if (!String(info).includes('cluster_state:ok')) return false;
          } finally {
            probe.disconnect();
          }
        }
        return true;
      },
      20_000,
      'cluster_state:ok on every node',
    );
  } catch (error) {
    await Promise.all(servers.map((server) => server.stop()));
    throw error;
  }
  return {
    nodes: servers.map((server) => ({ host: '127.0.0.1', port: server.port })),
    stop: async () => {
      await Promise.all(servers.map((server) => server.stop()));
    },
  };
}

/** Sleeps `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Counts the commands a client sends (ioredis routes every command through sendCommand). */
export function countCommands(client: Redis): { readonly names: string[]; reset(): void; restore(): void } {
  const names: string[] = [];
  const original = client.sendCommand.bind(client);
  client.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
    names.push(command.name);
    return (original as (...args: unknown[]) => unknown)(command, ...rest);
  }) as typeof client.sendCommand;
  return {
    names,
    reset: () => {
      names.length = 0;
    },
    restore: () => {
      client.sendCommand = original;
    },
  };
}
