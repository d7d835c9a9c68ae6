// The `toolfence` CLI as a real process against the shared Redis and PostgreSQL (a unique prefix
// and schema each, erased afterwards), and its refusals: a MemoryStore, bad options, an
// unreachable store (exit 3, password never printed).
import { PostgresStore } from '@toolfence/stores/postgres';
import { RedisStore } from '@toolfence/stores/redis';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createPool,
  databaseUrl,
  dropSchema,
  requirePostgres,
  uniqueSchemaName,
} from '../../../test/support/postgres.js';
import {
  connectRedis,
  deletePrefix,
  freePort,
  keysUnder,
  randomPrefix,
  redisUrl,
} from '../../../test/support/redis.js';
import { runCli } from '../../../test/support/run-cli.js';
import { operatorScenario } from './scenario.js';

const pools: pg.Pool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
});

describe('toolfence CLI', () => {
  it('lists, inspects, resolves, releases, counts and forgets on Redis', async () => {
    const prefix = randomPrefix('cli');
    const client = await connectRedis();
    const store = new RedisStore({ client, prefix });
    try {
      await operatorScenario(store, ['--store', redisUrl, '--prefix', prefix]);
    } finally {
      await store.close();
      await deletePrefix(client, prefix);
      expect(await keysUnder(client, prefix)).toEqual([]);
      client.disconnect();
    }
  }, 120_000);

  it('lists, inspects, resolves, releases, counts and forgets on PostgreSQL', async () => {
    await requirePostgres();
    const schema = uniqueSchemaName('cli');
    const pool = createPool({ max: 2 });
    pools.push(pool);
    const store = new PostgresStore({ pool, schema });
    try {
      await store.ensureSchema();
      await operatorScenario(store, ['--store', databaseUrl, '--schema', schema]);
    } finally {
      await store.close();
      await dropSchema(schema);
    }
  }, 120_000);

  it('refuses a MemoryStore, bad options and a missing store with exit 2', async () => {
    const memory = await runCli(['list', '--store', 'memory']);
    expect(memory.code).toBe(2);
    expect(memory.stderr).toContain('a MemoryStore lives inside one process');
    const none = await runCli(['list']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('TOOLFENCE_STORE');
    for (const args of [
      ['list', '--limit', '0'],
      ['list', '--state', 'running'],
      ['list', '--older-than', 'soon'],
      ['list', '--all-tenants', '--tenant', 't'],
      ['resolve', 'k'],
      ['resolve', 'k', '--outcome', '{not json'],
      ['frobnicate'],
    ]) {
      const run = await runCli(['--store', redisUrl, ...args]);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
    }
  }, 120_000);

  it('an unreachable store is exit 3, and its password is never printed', async () => {
    const port = await freePort();
    for (const store of [
      `redis://:hunter2secret@127.0.0.1:${port}/0`,
      `postgres://ops:hunter2secret@127.0.0.1:${port}/test`,
    ]) {
      for (const args of [['list'], ['resolve', 'k', '--outcome', '1'], ['stats', '--json']]) {
        const run = await runCli(['--store', store, ...args]);
        expect(run.code, run.stderr).toBe(3);
        expect(run.stderr).toContain(`127.0.0.1:${port}`);
        expect(run.stdout + run.stderr).not.toContain('hunter2secret');
      }
    }
    const viaEnv = await runCli(['list'], {
      env: { TOOLFENCE_STORE: `redis://:hunter2secret@127.0.0.1:${port}` },
    });
    expect(viaEnv.code).toBe(3);
    expect(viaEnv.stderr).not.toContain('hunter2secret');
    const sqlite = await runCli(['list', '--store', 'sqlite:/nonexistent/records.db']);
    expect(sqlite.code).toBe(3);
  }, 120_000);
});
