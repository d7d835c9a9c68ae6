// Lost replies on Redis (fault suite). When a connection drops after Redis ran a script but
// before its reply arrived, ioredis resends the command on reconnect (autoResendUnfulfilledCommands,
// on by default), so the script runs twice. Found by this suite: a resent claim found the record
// held by its own owner and answered `busy`, so the guard waited for itself until its lease
// expired and reported an EFFECTFUL call that never ran as indeterminate; a resent complete was
// answered `stale`, so the guard reported its own result as a rejected stale one. Fixed in
// claim-1.lua / complete-1.lua (commit c0288a2); these tests keep it fixed end to end, through
// the guard.
//
// A TCP proxy in front of Redis forwards a command, then drops the connection instead of
// forwarding its reply: what `CLIENT KILL` or a network cut does at the wrong moment.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { type ClaimOptions, Guard, Idempotency } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, redisUrl } from '../support/redis.js';

/** A proxy that can drop the next reply Redis sends, closing the client's connection instead. */
class ReplyDroppingProxy {
  readonly server: Server;
  readonly sockets = new Set<Socket>();
  dropNextReply = false;
  droppedReplies = 0;

  constructor(target: URL) {
    this.server = createServer((client) => {
      const upstream = tcpConnect(Number(target.port || 6379), target.hostname);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('error', () => {});
        socket.on('close', () => this.sockets.delete(socket));
      }
      client.on('data', (data) => upstream.write(data));
      upstream.on('data', (data) => {
        if (this.dropNextReply) {
          this.dropNextReply = false;
          this.droppedReplies += 1;
          client.destroy();
          upstream.destroy();
          return;
        }
        client.write(data);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const prefix = `tf-faults-resend-${randomBytes(4).toString('hex')}`;
let admin: Redis;
let proxy: ReplyDroppingProxy;
let client: Redis;
let store: RedisStore;

beforeAll(async () => {
  admin = await connectRedis({ maxRetriesPerRequest: 1 });
  proxy = new ReplyDroppingProxy(new URL(redisUrl));
  const port = await proxy.listen();
  // A user's ordinary client: ioredis defaults (reconnect, resend unfulfilled commands).
  client = new Redis({ host: '127.0.0.1', port });
  client.on('error', () => {});
  store = new RedisStore({ client, prefix });
  // Load the scripts (the first EVALSHA of each answers NOSCRIPT) so the next claim runs at once.
  await store.claim({ tenant: 't', key: randomBytes(32).toString('hex') }, claimOptions('at-least-once'));
});

afterAll(async () => {
  await store?.close();
  client?.disconnect();
  await proxy?.close();
  if (admin !== undefined) {
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.unlink(...keys);
    admin.disconnect();
  }
});

function claimOptions(mode: ClaimOptions['mode']): ClaimOptions {
  return {
    tool: 'charge_card',
    fingerprint: 'f'.repeat(64),
    owner: randomUUID(),
    leaseMs: 1000,
    retentionMs: 60_000,
    mode,
    maxAttempts: 3,
    checkFingerprint: false,
  };
}

describe('RedisStore: a script whose reply was lost with its connection, resent by ioredis', () => {
  it('a resent claim is answered as acquired for its own owner, not busy', async () => {
    const ref = { tenant: 't', key: randomBytes(32).toString('hex') };
    const options = claimOptions('at-most-once');
    proxy.dropNextReply = true;
    const result = await store.claim(ref, options);
    expect(proxy.droppedReplies).toBe(1);
    // Before the fix: { status: 'busy', record: { owner: options.owner, fence: 1, ... } }.
    expect(
      result.status === 'busy'
        ? `busy, held by its own owner: ${result.record.owner === options.owner}`
        : result.status,
    ).toBe('acquired');
  });

  it('an EFFECTFUL call whose claim reply was lost runs its body once and returns its value', async () => {
    const guard = new Guard({ store, tenant: 't' });
    let executions = 0;
    proxy.dropNextReply = true;
    const run = guard.run(
      {
        tool: 'charge_card',
        arguments: { account: randomUUID(), amountCents: 500 },
        runId: 'r',
        policy: { kind: Idempotency.EFFECTFUL, leaseMs: 1000 },
      },
      async () => {
        executions += 1;
        return 'charged';
      },
    );
    // Before the fix: IndeterminateOutcomeError after the lease (1 s), the body never run.
    await expect(run).resolves.toBe('charged');
    expect(executions).toBe(1);
  });

  it('a complete whose reply was lost is not reported as a stale result', async () => {
    const events: string[] = [];
    const guard = new Guard({ store, tenant: 't', onEvent: (event) => events.push(event.type) });
    const run = guard.run(
      {
        tool: 'charge_card',
        arguments: { account: randomUUID(), amountCents: 700 },
        runId: 'r',
        policy: { kind: Idempotency.EFFECTFUL, leaseMs: 1000 },
      },
      async () => {
        // The next reply Redis sends is the one to this attempt's complete.
        proxy.dropNextReply = true;
        return 'charged';
      },
    );
    await expect(run).resolves.toBe('charged');
    expect(proxy.droppedReplies).toBeGreaterThan(0);
    // Before the fix: ['tool.started', 'tool.stale_result', 'tool.deduplicated']: the resent
    // complete found the record completed by this very holder and was answered "stale".
    expect(events).toEqual(['tool.started', 'tool.completed']);
  });
});
