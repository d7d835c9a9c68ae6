// Private redis-servers for the curves that fill a server (1M records) or need a cluster: started
// from the redis-server binary on loopback (test/support/redis-server.ts), stopped when the suite ends. Ports: the
// comma-separated BENCH_REDIS_PORTS (the first for the single server, the next three for the
// cluster's masters), or free ports.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { freePort, type RedisServer, startRedisServer } from '../../test/support/redis-server.js';

const execFileAsync = promisify(execFile);

const givenPorts = (process.env.BENCH_REDIS_PORTS ?? '')
  .split(',')
  .map((port) => Number(port.trim()))
  .filter((port) => Number.isInteger(port) && port > 0);

async function port(index: number): Promise<number> {
  return givenPorts[index] ?? (await freePort());
}

/** A private single redis-server and an ioredis client on it. */
export async function privateRedis(): Promise<{ client: Redis; server: RedisServer; stop(): Promise<void> }> {
  const server = await startRedisServer({ port: await port(0) });
  const client = new Redis({ host: '127.0.0.1', port: server.port });
  client.on('error', () => {});
  await client.ping();
  return {
    client,
    server,
    async stop() {
      client.disconnect();
      await server.stop();
    },
  };
}

/** A private 3-master Redis Cluster and an ioredis Cluster client on it. */
export async function privateRedisCluster(): Promise<{ client: Cluster; stop(): Promise<void> }> {
  const servers: RedisServer[] = [];
  const stopAll = () => Promise.all(servers.map((server) => server.stop()));
  try {
    for (let index = 1; index <= 3; index++) {
      const chosen = await port(index);
      servers.push(
        await startRedisServer({
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${chosen}.conf`],
          port: chosen,
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
    const deadline = Date.now() + 20_000;
    for (const server of servers) {
      for (;;) {
        const probe = new Redis({ port: server.port, lazyConnect: true, retryStrategy: () => null });
        probe.on('error', () => {});
        try {
          await probe.connect();
          if (String(await probe.cluster('INFO')).includes('cluster_state:ok')) break;
        } catch {
          // not up yet
        } finally {
          probe.disconnect();
        }
        if (Date.now() > deadline)
          throw new Error(`cluster node ${server.port} never reached cluster_state:ok`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    const client = new Cluster(servers.map((server) => ({ host: '127.0.0.1', port: server.port })));
    client.on('error', () => {});
    await client.ping();
    return {
      client,
      async stop() {
        client.disconnect();
        await stopAll();
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
