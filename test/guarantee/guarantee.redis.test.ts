// The guarantee scenarios (test/guarantee/scenarios.ts) on RedisStore. The records are lost on a
// PRIVATE redis-server started by this file (flushed, and restarted empty): the shared Redis is
// never flushed or stopped.
import { currentToolCall, Guard, Idempotency, IndeterminateOutcomeError } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedisServer } from '../support/redis.js';
import { describeGuarantee, gate, sleep } from './scenarios.js';

let server: RedisServer;
let client: Redis;
let admin: Redis;
let store: RedisStore;

beforeAll(async () => {
  server = await startRedisServer();
  client = new Redis({ host: '127.0.0.1', port: server.port, maxRetriesPerRequest: 3 });
  client.on('error', () => undefined);
  admin = new Redis({ host: '127.0.0.1', port: server.port });
  admin.on('error', () => undefined);
  store = new RedisStore({ client, prefix: 'guarantee' });
});

afterAll(async () => {
  await store?.close();
  client?.disconnect();
  admin?.disconnect();
  await server?.stop();
});

/** Waits until ioredis has reconnected to the restarted server. */
async function untilReady(connection: Redis): Promise<void> {
  for (let i = 0; i < 200 && connection.status !== 'ready'; i++) await sleep(25);
  expect(connection.status).toBe('ready');
}

describeGuarantee('Redis (private server)', () => store, 'redis', {
  loseRecords: async () => {
    await admin.flushall();
  },
});

describe('the guarantee on Redis: a server restarted empty while the body runs', () => {
  for (const honoursAbort of [false, true]) {
    it(`EFFECTFUL: one execution when the server restarts empty (the body ${honoursAbort ? 'honours' : 'ignores'} its abort)`, async () => {
      const guard = new Guard({ store, tenant: `restart-${honoursAbort}` });
      const policy = { kind: Idempotency.EFFECTFUL, leaseMs: 600, heartbeatMs: 150, waitTimeoutMs: 5000 };
      const call = { tool: 'refund', arguments: { orderId: 'A-7' }, runId: 'r', policy };
      let executions = 0;
      const back = gate();
      const running = guard
        .run(call, async () => {
          executions++;
          const { signal } = currentToolCall()!;
          // Runs until the server is back and the client reconnected (however long that takes on
          // a loaded machine), honouring or ignoring the abort its lost lease sends.
          let reconnected = false;
          void back.wait.then(() => {
            reconnected = true;
          });
          // Honouring: it stops at the abort (the renewal after the restart finds no record).
          while (honoursAbort || !reconnected) {
            if (honoursAbort) signal.throwIfAborted();
            await sleep(25);
          }
          return 'refunded';
        })
        .then(
          (value) => ({ ok: true as const, value }),
          (error: unknown) => ({ ok: false as const, error }),
        );
      // The body runs (its claim answered, however late on a loaded machine), then the restart.
      while (executions === 0) await sleep(5);
      // Restarted empty (no persistence) on the same port: the client reconnects to a blank server.
      await server.restartEmpty();
      await untilReady(client);
      back.open();
      const outcome = await running;
      expect(executions).toBe(1);
      if (honoursAbort) {
        // The body stopped at its fenced signal: its outcome is unknown, and says so.
        expect(outcome.ok).toBe(false);
        expect(IndeterminateOutcomeError.isInstance((outcome as { error: unknown }).error)).toBe(true);
      } else {
        // The body ran to its end after the restart: its value is answered and recorded anew.
        expect(outcome).toEqual({ ok: true, value: 'refunded' });
        expect(await guard.run(call, () => 'must not run')).toBe('refunded');
      }
      expect(executions).toBe(1);
    });
  }
});
