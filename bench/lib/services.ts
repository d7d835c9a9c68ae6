// The services the benchmarks use: the shared Redis and PostgreSQL, checked, started and cleaned
// by the same helpers as the tests (test/support/redis.ts, test/support/postgres.ts).
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import {
  createPool,
  databaseUrl,
  postgresStartCommand,
  requirePostgres,
} from '../../test/support/postgres.js';
import {
  connectRedis as connectSharedRedis,
  deletePrefix,
  redisUrl,
  startRedisCommand,
} from '../../test/support/redis.js';

export { ServiceMissingError } from '../../test/support/service-missing-error.js';
export { databaseUrl, redisUrl, startRedisCommand };
export const startPostgresCommand = postgresStartCommand;

/** A name no other run (or test) uses: every key and table the run creates lives under it. */
export function randomName(label: string): string {
  return `tf_bench_${label}_${randomBytes(5).toString('hex')}`;
}

/**
 * An ioredis client on REDIS_URL that answered a PING. A missing Redis is a ServiceMissingError
 * naming the command that starts it, never a silent skip.
 */
export function connectRedis(): Promise<Redis> {
  return connectSharedRedis({ connectTimeout: 3000 });
}

/** A pg Pool on DATABASE_URL that answered `SELECT 1`; the same error policy as Redis. */
export async function connectPostgres(max: number): Promise<pg.Pool> {
  // The check has its own connect timeout; the pool has none, because under 1,000 concurrent calls
  // a caller may rightly wait seconds for one of its connections (pg-pool applies
  // connectionTimeoutMillis to that wait too).
  await requirePostgres(3000);
  // Named, so a test elsewhere that terminates backends by application_name (fault injection on a
  // shared database) cannot take the benchmark's connections for its own.
  return createPool({ max, application_name: 'toolfence-bench' });
}

/** Deletes every key starting with `prefix` (SCAN + UNLINK); returns how many. */
export function deleteRedisPrefix(client: Redis, prefix: string): Promise<number> {
  return deletePrefix(client, prefix);
}

/** `calls` of every command in `INFO commandstats` (names as Redis writes them, e.g. `evalsha`). */
export async function commandCalls(client: Redis): Promise<Map<string, number>> {
  return (await commandStats(client)).calls;
}

export interface CommandStats {
  readonly calls: Map<string, number>;
  readonly microseconds: Map<string, number>;
}

/** `calls` and `usec` (server time) of every command in `INFO commandstats`. */
export async function commandStats(client: Redis): Promise<CommandStats> {
  const text = await client.info('commandstats');
  const calls = new Map<string, number>();
  const microseconds = new Map<string, number>();
  for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    calls.set(match[1] as string, Number(match[2]));
    microseconds.set(match[1] as string, Number(match[3]));
  }
  return { calls, microseconds };
}

/**
 * Server time (`usec`) of the top-level commands between two snapshots, `INFO` itself left out.
 *
 * A command a Lua script runs (its GET, SET, TIME, PUBLISH) is counted twice by commandstats: in
 * its own line, and inside the `usec` of the EVALSHA / EVAL / FCALL that ran it. So only
 * top-level commands count: with `sentByName` (the commands this client sent, by lowercase
 * name), the commands it sent plus the session commands; a plain command it sent that scripts
 * ran too (e.g. a GET beside scripts that GET) is prorated by calls (sent ÷ counted). Without
 * it, the same rule as {@link roundTripsBetween}: when scripts ran, the script calls and session
 * commands; otherwise every command.
 */
export function serverMicrosecondsBetween(
  before: CommandStats,
  after: CommandStats,
  sentByName?: ReadonlyMap<string, number>,
): number {
  let total = 0;
  const scriptsRan = [...after.calls].some(
    ([command, calls]) => scriptCommands.has(command) && calls > (before.calls.get(command) ?? 0),
  );
  for (const [command, microseconds] of after.microseconds) {
    if (command === 'info') continue;
    const spent = microseconds - (before.microseconds.get(command) ?? 0);
    if (spent <= 0) continue;
    if (sentByName === undefined) {
      if (!scriptsRan || scriptCommands.has(command) || sessionCommands.has(command)) total += spent;
      continue;
    }
    if (scriptCommands.has(command) || sessionCommands.has(command)) {
      total += spent;
      continue;
    }
    const sent = sentByName.get(command) ?? 0;
    if (sent === 0) continue;
    const counted = (after.calls.get(command) ?? 0) - (before.calls.get(command) ?? 0);
    total += counted <= sent ? spent : (spent * sent) / counted;
  }
  return total;
}

const scriptCommands = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);
/** Commands a client sends for itself, never from inside a script. */
const sessionCommands = new Set(['ping', 'subscribe', 'unsubscribe', 'psubscribe', 'punsubscribe']);

/**
 * Round trips between two `INFO commandstats` snapshots. Redis counts the commands a Lua script
 * runs (its GET, SET, TIME, PUBLISH) in commandstats too, although they cost no round trip: when
 * scripts ran, only the script calls and the session commands (PING, SUBSCRIBE...) are round
 * trips; otherwise every command is. `INFO` itself (the measurement) never counts.
 */
export function roundTripsBetween(
  before: Map<string, number>,
  after: Map<string, number>,
  sentByName?: ReadonlyMap<string, number>,
): number {
  const delta = new Map<string, number>();
  for (const [command, calls] of after) {
    const change = calls - (before.get(command) ?? 0);
    if (change > 0 && command !== 'info') delta.set(command, change);
  }
  const scripts = [...delta].filter(([command]) => scriptCommands.has(command));
  if (scripts.length === 0) return [...delta.values()].reduce((sum, calls) => sum + calls, 0);
  const session = [...delta].filter(([command]) => sessionCommands.has(command));
  // Beside scripts, the top-level native commands this process sent (a native claim's SET and
  // PEXPIRETIME): the server's count of that name also holds the scripts' inner calls, so at most
  // what was sent is counted.
  let native = 0;
  for (const [command, sent] of sentByName ?? []) {
    if (scriptCommands.has(command) || sessionCommands.has(command)) continue;
    native += Math.min(sent, delta.get(command) ?? 0);
  }
  return [...scripts, ...session].reduce((sum, [, calls]) => sum + calls, native);
}

/**
 * Counts the commands an ioredis client sends, on the client side (a cross-check of
 * `INFO commandstats`, which other clients of a shared Redis also move), in total and by
 * lowercase command name.
 */
export function countIoredisCommands(client: Redis): {
  readonly count: () => number;
  /** A copy of the counts by command name so far. */
  readonly byName: () => Map<string, number>;
  reset(): void;
} {
  let sent = 0;
  const names = new Map<string, number>();
  const original = client.sendCommand.bind(client);
  client.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    sent++;
    const name = String(args[0]?.name ?? '').toLowerCase();
    names.set(name, (names.get(name) ?? 0) + 1);
    return original(...args);
  }) as Redis['sendCommand'];
  return {
    count: () => sent,
    byName: () => new Map(names),
    reset() {
      sent = 0;
      names.clear();
    },
  };
}
