import { randomUUID } from 'node:crypto';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { CachePersistenceLayer } from '@aws-lambda-powertools/idempotency/cache';
import { createClient } from '@redis/client';
import { Guard } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { type Row, row } from '../lib/report.js';
import {
  connectRedis,
  countIoredisCommands,
  deleteRedisPrefix,
  randomName,
  redisUrl,
} from '../lib/services.js';
import { interleave, RoundFigures, runBatch } from '../lib/stats.js';
import { guardedCalls } from '../lib/store-latency.js';
import { outcome100, scaled, toolArguments } from '../lib/workloads.js';
import { countRedisWork } from './redis.js';

/** The lease both sides get: toolfence's leaseMs, the peer's remaining Lambda time. */
const leaseMs = 30_000;

/**
 * toolfence (RedisStore over ioredis) against the nearest peer, `@aws-lambda-powertools/idempotency`
 * with its Redis persistence layer (`CachePersistenceLayer` over `@redis/client`), on the same
 * Redis and the same workloads, interleaved round by round.
 */
export async function peerSuite(): Promise<Row[]> {
  const client = await connectRedis();
  const prefix = randomName('ours');
  const store = new RedisStore({ client, prefix });
  const oursSent = countIoredisCommands(client);
  const peerPrefix = randomName('peer');
  const peerClient = createClient({ url: redisUrl });
  peerClient.on('error', () => {});
  await peerClient.connect();
  // The persistence layer accepts any { get, set, del }: counting here gives the commands it
  // sent, to check INFO commandstats against.
  let peerCommands = 0;
  const countedPeerClient = {
    get: (name: string) => {
      peerCommands++;
      return peerClient.get(name);
    },
    set: (name: string, value: unknown, options?: unknown) => {
      peerCommands++;
      return peerClient.set(name, value as string, options as Parameters<typeof peerClient.set>[2]);
    },
    del: (keys: string[]) => {
      peerCommands++;
      return peerClient.del(keys);
    },
  };
  try {
    const ours = guardedCalls(new Guard({ store }));
    const config = new IdempotencyConfig({ expiresAfterSeconds: 86_400 });
    // The lease: while in progress, a record blocks others for the "remaining time" of the call.
    config.registerLambdaContext({
      getRemainingTimeInMillis: () => leaseMs,
      functionName: 'bench',
    } as unknown as Parameters<IdempotencyConfig['registerLambdaContext']>[0]);
    const persistenceStore = new CachePersistenceLayer({ client: countedPeerClient });
    const peerTool = makeIdempotent(async (input: Record<string, unknown>) => outcome100(Number(input.id)), {
      persistenceStore,
      config,
      keyPrefix: peerPrefix,
    });
    const peerRun = `bench-${randomUUID()}`;
    // The same arguments as ours, plus the run id (part of our key, so part of theirs too).
    const peerCall = (id: number) => peerTool({ ...toolArguments(100, id), runId: peerRun, id });
    const repeatPool = 1_000;
    await ours.prepare();
    await runBatch(32, repeatPool, (id) => peerCall(id));
    let nextPeerFirst = repeatPool;
    const peer = {
      first: () => peerCall(nextPeerFirst++),
      repeat: (index: number) => peerCall(index % repeatPool),
    };
    const replay = await peer.repeat(7);
    if (JSON.stringify(replay) !== JSON.stringify(outcome100(7))) {
      throw new Error(`the peer replayed ${JSON.stringify(replay)} instead of the recorded outcome`);
    }

    const rows: Row[] = [];
    const rounds = scaled(7);
    for (const concurrency of [1, 32]) {
      const total = scaled(concurrency === 1 ? 300 : 3_000);
      const figures = {
        oursFirst: new RoundFigures(),
        peerFirst: new RoundFigures(),
        oursRepeat: new RoundFigures(),
        peerRepeat: new RoundFigures(),
      };
      await runBatch(concurrency, total, () => ours.first());
      await runBatch(concurrency, total, () => peer.first());
      await interleave(rounds, [
        { figures: figures.oursFirst, run: () => runBatch(concurrency, total, () => ours.first()) },
        { figures: figures.peerFirst, run: () => runBatch(concurrency, total, () => peer.first()) },
        {
          figures: figures.oursRepeat,
          run: () => runBatch(concurrency, total, (index) => ours.repeat(index)),
        },
        {
          figures: figures.peerRepeat,
          run: () => runBatch(concurrency, total, (index) => peer.repeat(index)),
        },
      ]);
      if (concurrency === 1) {
        rows.push(
          row(
            'peer: first call p50, c=1 (vs Powertools)',
            'ms',
            figures.oursFirst.p50,
            figures.peerFirst.p50,
            '<= 1.2',
          ),
          row(
            'peer: repeat p50, c=1 (vs Powertools)',
            'ms',
            figures.oursRepeat.p50,
            figures.peerRepeat.p50,
            '<= 0.7',
          ),
        );
      } else {
        rows.push(
          row(
            'peer: first call throughput, c=32 (vs Powertools)',
            'calls/s',
            figures.oursFirst.throughput,
            figures.peerFirst.throughput,
            '>= 1.5',
          ),
          row(
            'peer: repeat throughput, c=32 (vs Powertools)',
            'calls/s',
            figures.oursRepeat.throughput,
            figures.peerRepeat.throughput,
            '>= 1.5',
          ),
          row(
            'peer: first call p50, c=32 (vs Powertools)',
            'ms',
            figures.oursFirst.p50,
            figures.peerFirst.p50,
          ),
          row('peer: repeat p50, c=32 (vs Powertools)', 'ms', figures.oursRepeat.p50, figures.peerRepeat.p50),
        );
      }
    }

    const countedCalls = 50;
    const sequential = (operation: (index: number) => Promise<unknown>) => async () => {
      for (let index = 0; index < countedCalls; index++) await operation(index);
    };
    const perCall = async (label: string, sent: () => number, work: () => Promise<void>) =>
      (await countRedisWork(client, label, sent, work)).roundTrips / countedCalls;
    const peerSent = () => peerCommands;
    const oursFirstTrips = await perCall(
      'peer (toolfence)',
      oursSent.count,
      sequential(() => ours.first()),
    );
    const peerFirstTrips = await perCall(
      'peer (Powertools)',
      peerSent,
      sequential(() => peer.first()),
    );
    const oursRepeatTrips = await perCall(
      'peer (toolfence)',
      oursSent.count,
      sequential((i) => ours.repeat(i)),
    );
    const peerRepeatTrips = await perCall(
      'peer (Powertools)',
      peerSent,
      sequential((i) => peer.repeat(i)),
    );
    rows.push(
      row('peer: round trips per first call (vs Powertools)', 'round trips', oursFirstTrips, peerFirstTrips),
      row('peer: round trips per repeat (vs Powertools)', 'round trips', oursRepeatTrips, peerRepeatTrips),
    );
    return rows;
  } finally {
    await store.close();
    await deleteRedisPrefix(client, prefix);
    await deleteRedisPrefix(client, peerPrefix);
    peerClient.destroy();
    client.disconnect();
  }
}
