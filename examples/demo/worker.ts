// Worker A of the demo's "worker dies" scenario on Redis or SQLite, as a process of its own: it
// runs the AI SDK agent on the shared store until both calls of its step have applied their
// effect to the shared ledger (a Redis list, an SQLite table), prints IN_BODY, and waits to be
// SIGKILLed by the demo. Its guard events go to stdout as `EVENT {json}` lines. Started by
// examples/demo/stores.ts.
import { Guard, type IdempotencyStore } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { runAiSdkAgent } from './ai-sdk-agent.js';
import { TENANT } from './policies.js';
import { type Ledger, never, Provider, RedisLedger, SQLiteLedger } from './provider.js';
import { quoteSqliteName } from './sqlite-names.js';
import { EVENT, IN_BODY, type WorkerArguments } from './worker-protocol.js';

const args = JSON.parse(process.argv[2] ?? '{}') as WorkerArguments;
let store: IdempotencyStore;
let ledger: Ledger;
if (args.store.kind === 'redis') {
  const client = new Redis(args.store.url);
  store = new RedisStore({ client, prefix: args.store.prefix });
  ledger = new RedisLedger(client, `${args.store.prefix}:${args.ledger}`);
} else {
  store = new SQLiteStore({ path: args.store.path, table: args.store.table });
  const db = new Database(args.store.path, { timeout: 5_000 });
  ledger = new SQLiteLedger(db, quoteSqliteName(`${args.store.table}_ledger`), args.ledger);
}
const guard = args.guarded
  ? new Guard({
      store,
      tenant: TENANT,
      defaults: { leaseMs: args.leaseMs },
      onEvent: (event) => process.stdout.write(`${EVENT}${JSON.stringify(event)}\n`),
    })
  : undefined;

const provider = new Provider(ledger);
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
