import { createHash, randomUUID } from 'node:crypto';
import { type IdempotencyStore, jsonOutcomeCodec } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import type { Redis } from 'ioredis';
import { notes, type Row, row } from '../lib/report.js';
import { connectPostgres, connectRedis, deleteRedisPrefix, randomName } from '../lib/services.js';
import { runBatch } from '../lib/stats.js';
import { outcome100, scaled } from '../lib/workloads.js';
import { postgresPoolSize, throwawayPostgresStore } from './postgres.js';

const records = scaled(10_000);

function keyOf(index: number): string {
  return createHash('sha256').update(`footprint-${index}`).digest('hex');
}

/** Writes `records` completed records with a 100-byte outcome, as the guard would. */
async function writeCompletedRecords(store: IdempotencyStore): Promise<void> {
  const owner = randomUUID();
  await runBatch(32, records, async (index) => {
    const key = keyOf(index);
    const ref = { tenant: 'default', key };
    const claim = await store.claim(ref, {
      tool: 'place_order',
      fingerprint: key,
      owner: `${owner}:${index}`,
      leaseMs: 30_000,
      retentionMs: 86_400_000,
      mode: 'at-least-once',
      maxAttempts: 3,
      checkFingerprint: false,
    });
    if (claim.status !== 'acquired') throw new Error(`footprint: claim answered ${claim.status}`);
    const done = await store.complete(
      ref,
      { fence: claim.fence, owner: `${owner}:${index}` },
      jsonOutcomeCodec.encode(outcome100(index)),
      86_400_000,
    );
    if (done.status !== 'completed') throw new Error(`footprint: complete answered ${done.status}`);
  });
}

/** Every key matching `pattern` (SCAN), so no key a record uses is left out of its size. */
async function scanKeys(client: Redis, pattern: string): Promise<string[]> {
  const keys = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    for (const key of batch) keys.add(key);
  } while (cursor !== '0');
  return [...keys];
}

/** Sum of `MEMORY USAGE key SAMPLES 0` over `keys`. */
async function memoryUsage(client: Redis, keys: readonly string[]): Promise<number> {
  const pipeline = client.pipeline();
  for (const key of keys) pipeline.memory('USAGE', key, 'SAMPLES', '0');
  const results = (await pipeline.exec()) ?? [];
  let total = 0;
  for (const [error, bytes] of results) {
    if (error !== null || typeof bytes !== 'number')
      throw new Error(`MEMORY USAGE failed: ${error?.message ?? bytes}`);
    total += bytes;
  }
  return total;
}

/**
 * Bytes per completed record in Redis: `MEMORY USAGE` summed over every key the store left under
 * its prefix (the record key and any other key a record uses: found by SCAN, not assumed from
 * the layout) ÷ records, against a bare string of the record key's length holding only the
 * 100-byte outcome.
 */
export async function footprintRedisSuite(): Promise<Row[]> {
  const client = await connectRedis();
  const prefix = randomName('footprint');
  const store = new RedisStore({ client, prefix });
  try {
    await writeCompletedRecords(store);
    // Before the bare keys exist (they share the prefix): everything here is the store's.
    const storeKeys = await scanKeys(client, `${prefix.replace(/[\\*?[\]]/g, '\\$&')}:*`);
    const recordKeys = Array.from(
      { length: records },
      (_, index) => store.namesOf({ tenant: 'default', key: keyOf(index) }).key,
    );
    const found = new Set(storeKeys);
    const missing = recordKeys.filter((key) => !found.has(key));
    if (missing.length > 0) throw new Error(`footprint: ${missing.length} record keys not found by SCAN`);
    notes.push(
      `footprint redis: ${storeKeys.length.toLocaleString('en-US')} keys under the store's prefix for ` +
        `${records.toLocaleString('en-US')} records (${(storeKeys.length / records).toFixed(2)} per record), all summed.`,
    );
    const bareKeys = recordKeys.map((key) =>
      `${prefix}:bare:${key.slice(prefix.length + 1)}`.slice(0, key.length),
    );
    const writes = client.pipeline();
    for (const [index, key] of bareKeys.entries())
      writes.set(key, jsonOutcomeCodec.encode(outcome100(index)));
    await writes.exec();
    return [
      row(
        `footprint: redis, bytes per completed record (vs bare key + outcome)`,
        'bytes',
        (await memoryUsage(client, storeKeys)) / records,
        (await memoryUsage(client, bareKeys)) / records,
      ),
    ];
  } finally {
    await store.close();
    await deleteRedisPrefix(client, prefix);
    client.disconnect();
  }
}

/**
 * Bytes per completed record in Postgres: `pg_total_relation_size` of the table (heap, TOAST and
 * every index) over its rows, after a VACUUM, against a bare `(key text primary key, outcome
 * text)` table holding the same keys and outcomes.
 */
export async function footprintPostgresSuite(): Promise<Row[]> {
  const pool = await connectPostgres(postgresPoolSize);
  const { store, schema, drop } = await throwawayPostgresStore(pool, 'footprint');
  try {
    await writeCompletedRecords(store);
    const bare = `"${schema}"."bare_outcomes"`;
    await pool.query(`CREATE TABLE ${bare} (key text PRIMARY KEY, outcome text NOT NULL)`);
    const keys = Array.from({ length: records }, (_, index) => keyOf(index));
    const outcomes = keys.map((_, index) => jsonOutcomeCodec.encode(outcome100(index)));
    await pool.query(`INSERT INTO ${bare} SELECT * FROM unnest($1::text[], $2::text[])`, [keys, outcomes]);
    const perRow = async (table: string) => {
      await pool.query(`VACUUM ANALYZE ${table}`);
      const result = await pool.query<{ bytes: string; rows: string }>(
        `SELECT pg_total_relation_size('${table.replaceAll("'", "''")}') AS bytes, (SELECT count(*) FROM ${table}) AS rows`,
      );
      const { bytes, rows } = result.rows[0]!;
      return Number(bytes) / Number(rows);
    };
    return [
      row(
        'footprint: postgres, bytes per completed record (vs bare key + outcome table)',
        'bytes',
        await perRow(store.tableName),
        await perRow(bare),
      ),
    ];
  } finally {
    await drop();
    await pool.end();
  }
}
