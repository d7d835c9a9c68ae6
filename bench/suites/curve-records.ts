import { createHash, randomUUID } from 'node:crypto';
import { Guard, type IdempotencyStore, jsonOutcomeCodec, type RecordRef } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { curve, curves, parseSizeList } from '../lib/curves.js';
import { privateRedis } from '../lib/private-redis.js';
import { notes, type Row, row } from '../lib/report.js';
import { connectPostgres, randomName } from '../lib/services.js';
import { median, quantile, runBatch } from '../lib/stats.js';
import { guardedCalls } from '../lib/store-latency.js';
import { outcome100, scaled } from '../lib/workloads.js';
import { postgresPoolSize, throwawayPostgresStore } from './postgres.js';

/** Live-record counts of the curve: `--records 10k,100k,1M` (the default). */
export let recordSizes = [10_000, 100_000, 1_000_000];

export function setRecordSizes(text: string): void {
  recordSizes = parseSizeList(text, '--records');
}

const DAY_MS = 86_400_000;

/** One completed record written through the store (claim, complete), as the template of the fill. */
async function writeTemplate(store: IdempotencyStore, ref: RecordRef): Promise<void> {
  const owner = randomUUID();
  const claim = await store.claim(ref, {
    tool: 'place_order',
    fingerprint: ref.key,
    owner,
    leaseMs: 30_000,
    retentionMs: DAY_MS,
    mode: 'at-least-once',
    maxAttempts: 3,
    checkFingerprint: false,
  });
  if (claim.status !== 'acquired') throw new Error(`records curve: template claim answered ${claim.status}`);
  await store.complete(ref, { fence: claim.fence, owner }, jsonOutcomeCodec.encode(outcome100(0)), DAY_MS);
}

const fillKey = (index: number) => createHash('sha256').update(`fill-${index}`).digest('hex');

/**
 * First-call latency at concurrency 1 (p50, p99; median of 3 batches interleaved with repeats)
 * at each live-record count, the records filled between the points without the guard.
 */
async function recordsCurve(
  label: string,
  guard: Guard,
  fillTo: (records: number) => Promise<void>,
  /** Server CPU (µs) per call of `work`, where the server is private (nobody else moves it). */
  serverMicroseconds?: (calls: number, work: () => Promise<void>) => Promise<number>,
): Promise<void> {
  const calls = guardedCalls(guard);
  await calls.prepare();
  const latency = curve({
    id: `records-latency-${label}`,
    title: `${label}: first-call latency against live records`,
    xTitle: 'live records',
    yTitle: 'latency at concurrency 1 (ms)',
    xLog: true,
    yLog: true,
  });
  const total = scaled(300);
  for (const records of recordSizes) {
    const startedMs = performance.now();
    await fillTo(records);
    process.stderr.write(
      ` [${label} ${records.toLocaleString('en-US')} records in ${((performance.now() - startedMs) / 1000).toFixed(1)} s]`,
    );
    const first = { p50: [] as number[], p99: [] as number[] };
    const repeat = { p50: [] as number[], p99: [] as number[] };
    await runBatch(1, total, () => calls.first());
    for (let round = 0; round < 3; round++) {
      const firstBatch = await runBatch(1, total, () => calls.first());
      const repeatBatch = await runBatch(1, total, (index) => calls.repeat(index));
      first.p50.push(quantile(firstBatch.latenciesMs, 0.5));
      first.p99.push(quantile(firstBatch.latenciesMs, 0.99));
      repeat.p50.push(quantile(repeatBatch.latenciesMs, 0.5));
      repeat.p99.push(quantile(repeatBatch.latenciesMs, 0.99));
    }
    latency.points.push(
      { series: 'first call p50', x: records, y: median(first.p50) },
      { series: 'first call p99', x: records, y: median(first.p99) },
      { series: 'repeat p50', x: records, y: median(repeat.p50) },
    );
    if (serverMicroseconds !== undefined) {
      const cpu = curve({
        id: `records-cpu-${label}`,
        title: `${label}: server CPU per call against live records`,
        xTitle: 'live records',
        yTitle: 'server CPU per call (µs, commandstats)',
        xLog: true,
        yLog: false,
      });
      const firstCpu: number[] = [];
      const repeatCpu: number[] = [];
      for (let round = 0; round < 3; round++) {
        firstCpu.push(
          await serverMicroseconds(total, async () => void (await runBatch(1, total, () => calls.first()))),
        );
        repeatCpu.push(
          await serverMicroseconds(
            total,
            async () => void (await runBatch(1, total, (index) => calls.repeat(index))),
          ),
        );
      }
      cpu.points.push(
        { series: 'first call', x: records, y: median(firstCpu) },
        { series: 'repeat', x: records, y: median(repeatCpu) },
      );
    }
  }
}

function recordsRows(label: string): Row[] {
  const points = curve({
    id: `records-latency-${label}`,
    title: '',
    xTitle: '',
    yTitle: '',
    xLog: true,
    yLog: true,
  }).points;
  const at = (series: string, records: number) =>
    points.find((point) => point.series === series && point.x === records)?.y ?? Number.NaN;
  const smallest = recordSizes[0]!;
  const largest = recordSizes[recordSizes.length - 1]!;
  const count = (value: number) => value.toLocaleString('en-US');
  const cpu = curves.find((candidate) => candidate.id === `records-cpu-${label}`)?.points ?? [];
  const cpuAt = (series: string, records: number) =>
    cpu.find((point) => point.series === series && point.x === records)?.y ?? Number.NaN;
  const cpuRow = (series: string) =>
    row(
      `records: ${label} server CPU per ${series} at ${count(largest)} records (vs at ${count(smallest)})`,
      'µs',
      cpuAt(series, largest),
      cpuAt(series, smallest),
    );
  return [
    ...(cpu.length === 0 ? [] : [cpuRow('first call'), cpuRow('repeat')]),
    row(
      `records: ${label} first call p50 at ${count(largest)} records (vs at ${count(smallest)})`,
      'ms',
      at('first call p50', largest),
      at('first call p50', smallest),
    ),
    row(
      `records: ${label} first call p99 at ${count(largest)} records (vs at ${count(smallest)})`,
      'ms',
      at('first call p99', largest),
      at('first call p99', smallest),
    ),
    row(
      `records: ${label} repeat p50 at ${count(largest)} records (vs at ${count(smallest)})`,
      'ms',
      at('repeat p50', largest),
      at('repeat p50', smallest),
    ),
  ];
}

async function usedMemory(client: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1] ?? Number.NaN);
}

/**
 * Redis, on a private redis-server (1M records are ~0.5 GB): records are copies of one record the
 * store wrote (its string value under other record keys), SET in pipelines of 10,000. Bytes per
 * record at the largest count: the `used_memory` delta over the fill ÷ records filled, against
 * `MEMORY USAGE` of 1,000 sampled keys.
 */
export async function curveRecordsRedisSuite(): Promise<Row[]> {
  const redis = await privateRedis();
  const prefix = randomName('records');
  const store = new RedisStore({ client: redis.client, prefix });
  try {
    const client = redis.client;
    const templateRef = { tenant: 'default', key: fillKey(-1) };
    await writeTemplate(store, templateRef);
    // The fill copies what one record leaves: its key, and its entries in the tenant's listing
    // index and expiry index (layout v2, packages/stores/src/redis/statements/includes/01-record.lua). A
    // layout with more keys per record must be filled too.
    const recordKey = store.namesOf(templateRef).key;
    const indexKeys = [...(await client.keys('*'))].filter((key) => key !== recordKey).sort();
    if (indexKeys.length !== 2 || !indexKeys.every((key) => /:v2:[ix]:\{/.test(key))) {
      throw new Error(
        `records curve: one record left ${indexKeys.length + 1} keys (${[recordKey, ...indexKeys].join(', ')}); update the fill`,
      );
    }
    const template = await client.getBuffer(recordKey);
    if (template === null) throw new Error('records curve: the template record is missing');
    // Each index's entry of the template (`<state letter><15 digits><key>`), with its score.
    const entries: { index: string; member: string; score: string }[] = [];
    for (const index of indexKeys) {
      const members = await client.zrange(index, '0', '-1', 'WITHSCORES');
      for (let at = 0; at < members.length; at += 2) {
        const member = members[at] as string;
        if (member.endsWith(templateRef.key)) {
          entries.push({
            index,
            member: member.slice(0, -templateRef.key.length),
            score: members[at + 1] as string,
          });
        }
      }
    }
    if (entries.length !== 2)
      throw new Error(`records curve: the template has ${entries.length} index entries, not 2`);
    const keysBefore = await client.dbsize();
    const memoryBefore = await usedMemory(client);
    let filled = 0;
    const fillTo = async (records: number) => {
      while (filled < records) {
        const pipeline = client.pipeline();
        const end = Math.min(records, filled + 10_000);
        for (; filled < end; filled++) {
          pipeline.set(
            store.namesOf({ tenant: 'default', key: fillKey(filled) }).key,
            template,
            'PX',
            DAY_MS,
          );
          for (const entry of entries)
            pipeline.zadd(entry.index, entry.score, entry.member + fillKey(filled));
        }
        await pipeline.exec();
      }
    };
    // The server is private: commandstats move only with this suite's calls (the script calls
    // are the top-level commands; the commands they run are inside their usec).
    const scriptMicroseconds = async (calls: number, work: () => Promise<void>) => {
      await client.config('RESETSTAT');
      await work();
      const stats = await client.info('commandstats');
      let usec = 0;
      for (const match of stats.matchAll(/^cmdstat_(evalsha|eval|fcall):calls=\d+,usec=(\d+)/gm))
        usec += Number(match[2]);
      return usec / calls;
    };
    await recordsCurve('redis', new Guard({ store }), fillTo, scriptMicroseconds);
    const memoryAfter = await usedMemory(client);
    const sample = client.pipeline();
    for (let index = 0; index < 1_000; index++) {
      const key = store.namesOf({
        tenant: 'default',
        key: fillKey(Math.floor((index * filled) / 1_000)),
      }).key;
      sample.memory('USAGE', key, 'SAMPLES', '0');
    }
    const sampled = ((await sample.exec()) ?? []).map(([, bytes]) => Number(bytes));
    const perKey = sampled.reduce((sum, bytes) => sum + bytes, 0) / sampled.length;
    const dbsize = await client.dbsize();
    notes.push(
      `records redis: ${dbsize.toLocaleString('en-US')} keys at the end (${filled.toLocaleString('en-US')} filled, the rest written by the curve's calls); used_memory grew ${((memoryAfter - memoryBefore) / 2 ** 20).toFixed(0)} MiB.`,
    );
    return [
      ...recordsRows('redis'),
      row(
        `records: redis bytes per record at ${filled.toLocaleString('en-US')} (used_memory delta ÷ records added, index entries included, vs MEMORY USAGE of 1,000 sampled record keys)`,
        'bytes',
        (memoryAfter - memoryBefore) / (dbsize - keysBefore),
        perKey,
      ),
    ];
  } finally {
    await store.close();
    await redis.stop();
  }
}

/**
 * PostgreSQL, in a throwaway schema on DATABASE_URL: records are copies of one row the store
 * wrote, with other keys, made by `INSERT ... SELECT ... generate_series` in chunks of 100,000
 * (server-side, no round trip per row), then `VACUUM ANALYZE`. Bytes per record at the largest
 * count: `pg_total_relation_size` (heap, TOAST, every index) ÷ rows.
 */
export async function curveRecordsPostgresSuite(): Promise<Row[]> {
  const pool = await connectPostgres(postgresPoolSize);
  const { store, drop } = await throwawayPostgresStore(pool, 'records');
  try {
    const templateRef = { tenant: 'default', key: fillKey(-1) };
    await writeTemplate(store, templateRef);
    const table = store.tableName;
    const columns = await tableColumns(pool, table);
    const selectList = columns
      .map((column) => (column === 'key' ? `encode(sha256(('fill-' || g)::bytea), 'hex')` : `t."${column}"`))
      .join(', ');
    const insertList = columns.map((column) => `"${column}"`).join(', ');
    let filled = 0;
    const fillTo = async (records: number) => {
      while (filled < records) {
        const end = Math.min(records, filled + 100_000);
        await pool.query(
          `INSERT INTO ${table} (${insertList}) SELECT ${selectList} FROM ${table} AS t, generate_series($1::int, $2::int) AS g WHERE t.tenant = $3 AND t.key = $4`,
          [filled, end - 1, templateRef.tenant, templateRef.key],
        );
        filled = end;
      }
      await pool.query(`VACUUM ANALYZE ${table}`);
    };
    await recordsCurve('postgres', new Guard({ store }), fillTo);
    await pool.query(`VACUUM ANALYZE ${table}`);
    const size = await pool.query<{ bytes: string; rows: string }>(
      `SELECT pg_total_relation_size($1::regclass) AS bytes, (SELECT count(*) FROM ${table}) AS rows`,
      [table],
    );
    const { bytes, rows } = size.rows[0]!;
    return [
      ...recordsRows('postgres'),
      row(
        `records: postgres bytes per record at ${Number(rows).toLocaleString('en-US')} rows (pg_total_relation_size ÷ rows)`,
        'bytes',
        Number(bytes) / Number(rows),
      ),
    ];
  } finally {
    await drop();
    await pool.end();
  }
}

/** The table's writable columns (no generated or dropped ones), in order. */
async function tableColumns(pool: pg.Pool, table: string): Promise<string[]> {
  const result = await pool.query<{ attname: string }>(
    `SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`,
    [table],
  );
  return result.rows.map((entry) => entry.attname);
}
