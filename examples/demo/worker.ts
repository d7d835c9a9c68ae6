// Worker A of the demo's "worker dies" scenario on Redis, as a process of its own: it runs the
// AI SDK agent on the shared RedisStore until both calls of its step have applied their effect
// to the shared ledger (a Redis list), prints IN_BODY, and waits to be SIGKILLed by the demo.
// Its guard events go to stdout as `EVENT {json}` lines. Started by examples/demo/stores.ts.
import { Guard } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis';
import { runAiSdkAgent } from './ai-sdk-agent.js';
import { TENANT } from './policies.js';
import { never, Provider, RedisLedger } from './provider.js';
import { EVENT, IN_BODY, type WorkerArguments } from './worker-protocol.js';

const args = JSON.parse(process.argv[2] ?? '{}') as WorkerArguments;
const client = new Redis(args.redisUrl);
const store = new RedisStore({ client, prefix: args.prefix });
const guard = args.guarded
  ? new Guard({
      store,
      tenant: TENANT,
      defaults: { leaseMs: args.leaseMs },
      onEvent: (event) => process.stdout.write(`${EVENT}${JSON.stringify(event)}\n`),
    })
  : undefined;

const provider = new Provider(new RedisLedger(client, `${args.prefix}:${args.ledger}`));
let inside = 0;
provider.faults.dieAfterEffect = () => {
  if (++inside === 2) process.stdout.write(`${IN_BODY}\n`);
  return never();
};
// Keeps the process (and its lease heartbeat) alive until the SIGKILL; should the demo die
// first, its end of stdin closes and this worker ends too.
setInterval(() => undefined, 60_000);
process.stdin.resume().on('end', () => process.exit(3));
await runAiSdkAgent(provider, args.script, args.runId, guard);
