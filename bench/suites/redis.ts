import { randomUUID } from 'node:crypto';
import { Guard, jsonOutcomeCodec } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import type { Redis } from 'ioredis';
import { listingRows } from '../lib/listing-rows.js';
import { notes, type Row, row } from '../lib/report.js';
import {
  commandStats,
  connectRedis,
  countIoredisCommands,
  deleteRedisPrefix,
  randomName,
  roundTripsBetween,
  serverMicrosecondsBetween,
} from '../lib/services.js';
import { median } from '../lib/stats.js';
import { guardedCalls, storeLatencyRows } from '../lib/store-latency.js';
import { outcome100 } from '../lib/workloads.js';

/** What a counted window of calls cost. */
export interface CountedWork {
  readonly roundTrips: number;
  /** Redis server time spent (commandstats `usec`), when the window was quiet; else NaN. */
  readonly serverMicroseconds: number;
}

/**
 * Round trips from `INFO commandstats` deltas (server side), accepted only when they agree with
 * the commands this process sent (client side): on a Redis shared with other clients a window
 * can be polluted, so it is measured again (up to 5 times) and, failing that, the client-side
 * count is used and a note says so.
 */
export async function countRedisWork(
  client: Redis,
  label: string,
  sentCommands: () => number,
  work: () => Promise<void>,
  sentByName?: () => Map<string, number>,
): Promise<CountedWork> {
  let clientSide = 0;
  for (let attempt = 0; attempt < 5; attempt++) {
    const before = await commandStats(client);
    const sentBefore = sentCommands();
    const namesBefore = sentByName?.();
    await work();
    clientSide = sentCommands() - sentBefore;
    const namesAfter = sentByName?.();
    const after = await commandStats(client);
    let sentInWindow: Map<string, number> | undefined;
    if (namesBefore !== undefined && namesAfter !== undefined) {
      sentInWindow = new Map();
      for (const [name, count] of namesAfter) {
        const change = count - (namesBefore.get(name) ?? 0);
        if (change > 0) sentInWindow.set(name, change);
      }
    }
    const serverSide = roundTripsBetween(before.calls, after.calls, sentInWindow);
    if (serverSide === clientSide) {
      return {
        roundTrips: serverSide,
        serverMicroseconds: serverMicrosecondsBetween(before, after, sentInWindow),
      };
    }
  }
  notes.push(
    `${label}: other clients kept this Redis busy, INFO commandstats never matched the commands sent in ` +
      '5 windows; the round trips shown are the client-side count.',
  );
  return { roundTrips: clientSide, serverMicroseconds: Number.NaN };
}

export async function redisSuite(): Promise<Row[]> {
  const client = await connectRedis();
  const prefix = randomName('redis');
  const store = new RedisStore({ client, prefix });
  const sent = countIoredisCommands(client);
  try {
    const ping = () => client.ping();
    const guard = new Guard({ store });
    const rows = await storeLatencyRows({
      label: 'redis',
      guard,
      baselines: {
        first: {
          name: '2×PING',
          run: async () => {
            await ping();
            await ping();
          },
        },
        repeat: { name: 'PING', run: ping },
      },
      countRoundTrips: (work) => countRedisWork(client, 'redis', sent.count, work, sent.byName),
      firstCallTarget: '<= 1.3',
      repeatTarget: '<= 1.3',
      serverTimeBaseline: { name: 'PING', run: ping },
    });
    rows.push(...(await bareDesignCpuRows(client, prefix, guard, sent)));
    rows.push(...(await listingRows('redis', store)));
    return rows;
  } finally {
    await store.close();
    await deleteRedisPrefix(client, prefix);
    client.disconnect();
  }
}

/**
 * The smallest idempotency design on native commands, as a floor for Redis CPU: a first call is
 * `SET k pending NX PX lease` (the claim) then `SET k outcome XX PX retention` (the completion);
 * a repeat is one `SET k pending NX PX lease GET`, which claims or returns the recorded value in
 * one command (Redis >= 7.0). No fencing, no owner check, no lease takeover, no waiter wake-up:
 * what it leaves out is what our scripts do.
 */
export function bareDesign(client: Redis, prefix: string) {
  const keyOf = (id: number) => `${prefix}:bare:${id}`;
  const pending = JSON.stringify({ state: 'in_progress', owner: randomUUID() });
  const repeatPool = 1_000;
  let nextFirst = repeatPool;
  const first = async (id: number) => {
    const claimed = await client.set(keyOf(id), pending, 'PX', 30_000, 'NX');
    if (claimed !== 'OK') throw new Error(`bare design: the claim of a fresh key answered ${claimed}`);
    await client.set(keyOf(id), jsonOutcomeCodec.encode(outcome100(id)), 'PX', 86_400_000, 'XX');
  };
  return {
    async prepare(): Promise<void> {
      const pipeline = client.pipeline();
      for (let id = 0; id < repeatPool; id++) {
        pipeline.set(keyOf(id), jsonOutcomeCodec.encode(outcome100(id)), 'PX', 86_400_000);
      }
      await pipeline.exec();
    },
    first: () => first(nextFirst++),
    repeat: async (index: number) => {
      const id = index % repeatPool;
      const old = await client.set(keyOf(id), pending, 'PX', 30_000, 'NX', 'GET');
      if (old === null) throw new Error('bare design: a repeat found no recorded value');
      return old;
    },
  };
}

/**
 * Redis CPU per call (commandstats `usec` of the top-level commands, i.e. the EVALSHA of our
 * scripts against the bare design's native SETs), over windows of sequential calls interleaved
 * ours / bare, median of the windows: target <= 3 (issue 22).
 */
async function bareDesignCpuRows(
  client: Redis,
  prefix: string,
  guard: Guard,
  sent: ReturnType<typeof countIoredisCommands>,
): Promise<Row[]> {
  const bare = bareDesign(client, prefix);
  await bare.prepare();
  const ours = guardedCalls(guard);
  await ours.prepare();
  const callsPerWindow = 200;
  const perCall = async (operation: (index: number) => Promise<unknown>) => {
    const counted = await countRedisWork(
      client,
      'redis (CPU vs bare design)',
      sent.count,
      async () => {
        for (let index = 0; index < callsPerWindow; index++) await operation(index);
      },
      sent.byName,
    );
    return counted.serverMicroseconds / callsPerWindow;
  };
  const samples = {
    oursFirst: [] as number[],
    bareFirst: [] as number[],
    oursRepeat: [] as number[],
    bareRepeat: [] as number[],
  };
  for (let window = 0; window < 5; window++) {
    samples.oursFirst.push(await perCall(() => ours.first()));
    samples.bareFirst.push(await perCall(() => bare.first()));
    samples.oursRepeat.push(await perCall((index) => ours.repeat(index)));
    samples.bareRepeat.push(await perCall((index) => bare.repeat(index)));
  }
  const finite = (values: number[]) => median(values.filter((value) => Number.isFinite(value)));
  return [
    row(
      'redis: Redis CPU per first call (vs bare SET NX + SET XX)',
      'µs',
      finite(samples.oursFirst),
      finite(samples.bareFirst),
      '<= 3',
    ),
    row(
      'redis: Redis CPU per repeat (vs bare SET NX GET)',
      'µs',
      finite(samples.oursRepeat),
      finite(samples.bareRepeat),
      '<= 3',
    ),
  ];
}
