import { Guard } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { curve, kneeOf } from '../lib/curves.js';
import { privateRedis, privateRedisCluster } from '../lib/private-redis.js';
import { type Row, row } from '../lib/report.js';
import { randomName } from '../lib/services.js';
import { median, runBatch } from '../lib/stats.js';
import { guardedCalls } from '../lib/store-latency.js';
import { scaled } from '../lib/workloads.js';

const levels = [1, 8, 32, 64, 128, 256];

/**
 * First-call and repeat throughput against concurrency on a private 3-master Redis Cluster
 * and on a private single redis-server (same binary, same settings), one Node process driving
 * both, interleaved level by level. Both run on the same 2-core machine as the client.
 */
export async function curveClusterSuite(): Promise<Row[]> {
  const single = await privateRedis();
  const cluster = await privateRedisCluster().catch(async (error: unknown) => {
    await single.stop();
    throw error;
  });
  const singleStore = new RedisStore({ client: single.client, prefix: randomName('single') });
  const clusterStore = new RedisStore({ client: cluster.client, prefix: randomName('cluster') });
  try {
    const targets = [
      { name: '1 master', calls: guardedCalls(new Guard({ store: singleStore })) },
      { name: '3 masters (cluster)', calls: guardedCalls(new Guard({ store: clusterStore })) },
    ];
    for (const target of targets) await target.calls.prepare();
    const throughput = curve({
      id: 'cluster-throughput-redis',
      title: 'redis: throughput on 3 masters (cluster) and on 1',
      xTitle: 'concurrency (workers)',
      yTitle: 'calls/s',
      xLog: true,
      yLog: false,
    });
    for (const concurrency of levels) {
      const total = Math.max(scaled(1_000), 8 * concurrency);
      for (const target of targets) {
        for (const kind of ['first call', 'repeat'] as const) {
          const rates: number[] = [];
          for (let round = 0; round < 3; round++) {
            const batch = await runBatch(concurrency, total, (index) =>
              kind === 'first call' ? target.calls.first() : target.calls.repeat(index),
            );
            rates.push((total * 1000) / batch.elapsedMs);
          }
          throughput.points.push({ series: `${kind}, ${target.name}`, x: concurrency, y: median(rates) });
        }
      }
    }
    const peak = (series: string) =>
      kneeOf(throughput.points.filter((point) => point.series === series)).peak;
    return [
      row(
        'cluster: redis first call peak throughput, 3 masters (vs 1)',
        'calls/s',
        peak('first call, 3 masters (cluster)'),
        peak('first call, 1 master'),
      ),
      row(
        'cluster: redis repeat peak throughput, 3 masters (vs 1)',
        'calls/s',
        peak('repeat, 3 masters (cluster)'),
        peak('repeat, 1 master'),
      ),
    ];
  } finally {
    await singleStore.close();
    await clusterStore.close();
    await cluster.stop();
    await single.stop();
  }
}
