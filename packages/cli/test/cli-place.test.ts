// "No records" that means "wrong place": an empty answer says which store (masked), namespace and
// tenant it read. A namespace with nothing of toolfence's in it (the app uses a --prefix the
// operator left out, a wrong --schema, a SQLite file without the table) is exit 3 and names the
// namespaces that do hold toolfence data; a namespace whose records just do not match is exit 0
// and says where the records are (other tenants, other states).
import { Guard, Idempotency, type IdempotencyPolicy } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseUrl, requirePostgres, uniqueSchemaName } from '../../../test/support/postgres.js';
import { type RedisServer, startRedisServer } from '../../../test/support/redis.js';
import { runCli } from '../../../test/support/run-cli.js';
import { sqliteDirectory } from '../../../test/support/sqlite.js';

const policy: IdempotencyPolicy = { kind: Idempotency.EFFECTFUL };
let server: RedisServer;
let client: Redis;
let store: RedisStore;
let key: string;
let url: string;

beforeAll(async () => {
  // A private server: its default prefix is certainly empty.
  server = await startRedisServer();
  url = `redis://:s3cret-pw@127.0.0.1:${server.port}/0`;
  client = new Redis({ port: server.port, host: '127.0.0.1', lazyConnect: true });
  await client.connect();
  await client.call('CONFIG', 'SET', 'requirepass', 's3cret-pw');
  await client.auth('s3cret-pw');
  store = new RedisStore({ client, prefix: 'shopapp' });
  const guard = new Guard({ store, tenant: 'shop' });
  key = await guard
    .run({ tool: 'refund', arguments: { orderId: 'A-1' }, runId: 'run-1', policy }, () =>
      Promise.reject(new Error('timeout')),
    )
    .then(
      () => expect.unreachable('should be indeterminate'),
      (error: { key: string }) => error.key,
    );
}, 60_000);
afterAll(async () => {
  await store?.close();
  client?.disconnect();
  await server?.stop();
});

describe('which store, namespace and tenant', () => {
  it('Redis without the --prefix the app uses: exit 3, names where it read and where the data is', async () => {
    for (const args of [['list'], ['stats'], ['inspect', key], ['list', '--json']]) {
      const run = await runCli(['--store', url, '--tenant', 'shop', ...args]);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(3);
      expect(run.stderr).toContain(
        `nothing of toolfence's in redis://:***@127.0.0.1:${server.port}/0 prefix "toolfence"`,
      );
      expect(run.stderr).toContain('toolfence data is under --prefix "shopapp"');
      expect(run.stdout + run.stderr).not.toContain('s3cret-pw');
    }
    const json = await runCli(['--store', url, '--tenant', 'shop', 'list', '--json']);
    expect(json.page).toMatchObject({
      records: 0,
      more: false,
      store: `redis://:***@127.0.0.1:${server.port}/0`,
      namespace: { prefix: 'toolfence' },
      tenant: 'shop',
    });
  }, 60_000);

  it('the right prefix, another tenant or other states: exit 0, and where the records are', async () => {
    const base = ['--store', url, '--prefix', 'shopapp'];
    const found = await runCli([...base, '--tenant', 'shop', 'list']);
    expect(found.code, found.stderr).toBe(0);
    expect(found.stdout).toContain(key);
    const otherTenant = await runCli([...base, '--tenant', 'default', 'list']);
    expect(otherTenant.code, otherTenant.stderr).toBe(0);
    expect(otherTenant.stdout).toContain(
      `no indeterminate, abandoned, lease_expired records in redis://:***@127.0.0.1:${server.port}/0 prefix "shopapp", tenant "default"; other tenants have matching records (--all-tenants lists them)`,
    );
    const otherState = await runCli([...base, '--tenant', 'shop', 'list', '--state', 'completed']);
    expect(otherState.code).toBe(0);
    expect(otherState.stdout).toContain('no completed records in');
    expect(otherState.stdout).toContain('this tenant has records in other states');
    const inspect = await runCli([...base, '--tenant', 'shop', 'inspect', 'f'.repeat(64)]);
    expect(inspect.code).toBe(1);
    expect(inspect.stdout).toContain(`store     redis://:***@127.0.0.1:${server.port}/0 prefix "shopapp"`);
  }, 60_000);

  it('PostgreSQL: a wrong --schema is exit 3 naming it; SQLite: an empty table says it holds none', async () => {
    await requirePostgres();
    const schema = uniqueSchemaName('cli-place');
    const run = await runCli(['--store', databaseUrl, '--schema', schema, 'list']);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain(`schema "${schema}"`);
    const directory = sqliteDirectory('cli-place');
    try {
      const file = directory.file('records.db');
      const empty = new SQLiteStore({ path: file });
      await empty.ensureSchema();
      await empty.close();
      const listed = await runCli(['--store', `sqlite:${file}`, 'list']);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(
        `no records in sqlite:${file} table "toolfence_records", tenant "default": the namespace holds none, of any tenant or state`,
      );
    } finally {
      directory.remove();
    }
  }, 60_000);
});
