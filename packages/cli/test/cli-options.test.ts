// Every option is checked before anything connects: a bad one is exit 2 and the store never sees a
// connection (a TCP listener counts them); every exit path closes what it opened, so the process
// exits; a store that accepts connections but never answers is exit 3 within the CLI's deadline.
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisUrl } from '../../../test/support/redis.js';
import { runCli } from '../../../test/support/run-cli.js';

/** A listener that accepts and never answers: what a frozen server or a blackholed path looks like. */
let silent: Server;
let port = 0;
let connections = 0;
const sockets = new Set<Socket>();

beforeAll(async () => {
  silent = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  port = (silent.address() as { port: number }).port;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

const long = 'x'.repeat(60);
const badInputs: readonly (readonly string[])[] = [
  ['list', '--prefix', ''],
  ['list', '--prefix', '{x}'],
  ['list', '--limit', '0'],
  ['list', '--older-than', '10'],
  ['list', '--state', 'running'],
  ['list', '--order', 'sideways'],
  ['list', '--cursor', ''],
  ['--tenant', 't'.repeat(2000), 'list'],
  ['inspect', 'k'.repeat(2000)],
  ['resolve', 'k', '--outcome', '{not json'],
  ['resolve', 'k', '--outcome', '1', '--retention', '7'],
  ['release', 'k', '--fence', 'one', '--owner', 'o'],
  ['release', 'k', '--by', 'b'.repeat(2000)],
  ['stats', '--all-tenants', '--tenant', 't'],
];

describe('bad input is refused before anything connects', () => {
  it('Redis: exit 2, no connection, the process exits', async () => {
    for (const args of badInputs) {
      const before = connections;
      const run = await runCli(['--store', `redis://127.0.0.1:${port}`, ...args]);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(connections, args.join(' ')).toBe(before);
    }
  }, 120_000);

  it('PostgreSQL and SQLite: exit 2, no connection; an option of another store is refused', async () => {
    for (const args of [
      ['--schema', long, 'list'],
      ['--schema', '', 'list'],
      ['--table', long, 'inspect', 'k'],
      ['--prefix', 'app', 'list'],
      ['list', '--limit', 'many'],
    ]) {
      const before = connections;
      const run = await runCli(['--store', `postgres://ops@127.0.0.1:${port}/test`, ...args]);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(connections, args.join(' ')).toBe(before);
    }
    for (const args of [
      ['--prefix', 'app', 'list'],
      ['--schema', 'app', 'list'],
      ['--table', '', 'list'],
    ]) {
      const run = await runCli(['--store', 'sqlite:/nonexistent/records.db', ...args]);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
    }
    const wrongKind = await runCli(['--store', redisUrl, '--schema', 'app', 'list']);
    expect(wrongKind.code).toBe(2);
    expect(wrongKind.stderr).toContain('--schema is not an option of the redis store');
  }, 120_000);

  it('a store that accepts but never answers is exit 3 within the deadline (Redis and PostgreSQL)', async () => {
    for (const store of [`redis://127.0.0.1:${port}/0`, `postgres://ops@127.0.0.1:${port}/test`]) {
      const before = connections;
      // runCli kills the process after 30 s: exit 3 means the CLI gave up by itself.
      const run = await runCli(['--store', store, 'list']);
      expect(run.code, run.stderr).toBe(3);
      expect(run.stderr).toContain(`cannot reach ${store.replace('/0', '').replace('/test', '')}`);
      expect(connections).toBeGreaterThan(before);
    }
  }, 120_000);
});
