import { Guard } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import type { Redis } from 'ioredis';
import { notes, type Row } from '../lib/report.js';
import {
  commandStats,
  connectRedis,
  countIoredisCommands,
  deleteRedisPrefix,
  randomName,
  roundTripsBetween,
  serverMicrosecondsBetween,
} from '../lib/services.js';
import { storeLatencyRows } from '../lib/store-latency.js';

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
    const serverSide = roundTripsBetween(before.calls, after.calls);
    if (serverSide === clientSide) {
      let sentInWindow: Map<string, number> | undefined;
      if (namesBefore !== undefined && namesAfter !== undefined) {
        sentInWindow = new Map();
        for (const [name, count] of namesAfter) {
          const change = count - (namesBefore.get(name) ?? 0);
          if (change > 0) sentInWindow.set(name, change);
        }
      }
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
    return await storeLatencyRows({
      label: 'redis',
      guard: new Guard({ store }),
      oneRoundTrip: () => client.ping(),
      roundTripName: 'PING',
      countRoundTrips: (work) => countRedisWork(client, 'redis', sent.count, work, sent.byName),
      firstCallTarget: '<= 1.3',
      repeatTarget: '<= 1.3',
    });
  } finally {
    await store.close();
    await deleteRedisPrefix(client, prefix);
    client.disconnect();
  }
}
