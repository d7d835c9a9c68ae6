// One real process holding a MemoryStore, the application that asks for approvals on it, and the
// `toolfence` CLI on the same store (no other process can reach a MemoryStore; the stores a
// separate CLI process opens keep no approvals yet). Run as
//   node --import tsx --conditions=@toolfence/source approval-process.ts '<steps as JSON>'
// Each step's result is one JSON line on stdout. Steps:
//   { "ask": { "as": "a" | "b", "amount": N } }  the app calls `refund` (policy approval: required)
//   { "cli": [args…] }                            the CLI; "$KEY" and "$OWNER" are replaced
//   { "owner": true }                             remember the record's owner as "$OWNER"
//   { "forget": true }                            erase the tenant (the request is gone)
//   { "record": true }                            the record as the store has it
//   { "withoutApprovals": true }                  the CLI's store has no decideApproval from now on
//   { "approveAhead": N }                         the app approves the call (amount N) before it asks
import { PassThrough } from 'node:stream';
import {
  Guard,
  Idempotency,
  type IdempotencyPolicy,
  type IdempotencyStore,
  MemoryStore,
} from '@toolfence/core';
import { runCommandLine } from '../src/main.js';
import type { OpenStore } from '../src/open-store.js';

type Step =
  | { ask: { as: 'a' | 'b'; amount: number } }
  | { cli: string[] }
  | { owner: true }
  | { forget: true }
  | { record: true }
  | { withoutApprovals: true }
  | { approveAhead: number };

const tenant = 'acme';
const store = new MemoryStore();
/** The same records through a store that keeps no approvals (as a store without the method). */
const withoutApprovals = new Proxy(store, {
  get: (target, name) => {
    if (name === 'decideApproval') return undefined;
    if (name === 'constructor') return { name: 'StoreWithoutApprovals' };
    const value = Reflect.get(target, name, target) as unknown;
    return typeof value === 'function' ? value.bind(target) : value;
  },
}) as IdempotencyStore;
let cliStore: IdempotencyStore = store;
const guards = { a: new Guard({ store, tenant }), b: new Guard({ store, tenant }) };
const policy = {
  kind: Idempotency.EFFECTFUL,
  approval: 'required',
  describe: (args: { orderId: string; amount: number }) => `refund ${args.orderId} EUR ${args.amount}`,
} as unknown as IdempotencyPolicy;
let runs = 0;
const vars: Record<string, string> = {};

async function ask(as: 'a' | 'b', amount: number): Promise<Record<string, unknown>> {
  try {
    const value = await guards[as].run(
      { tool: 'refund', arguments: { orderId: 'A-1', amount }, runId: 'run-1', policy },
      async () => {
        runs += 1;
        return { refundId: `r-${runs}` };
      },
    );
    return { ask: 'ran', value, runs };
  } catch (error) {
    const { code, key } = error as { code?: string; key?: string };
    if (key !== undefined) vars.$KEY = key;
    return { ask: code ?? String(error), runs };
  }
}

async function cli(args: readonly string[]): Promise<Record<string, unknown>> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  const opened: OpenStore = {
    store: cliStore,
    namespace: 'memory',
    namespaceOptions: {},
    probe: async () => ({ hasData: true, elsewhere: [] }),
    close: async () => undefined,
  };
  const code = await runCommandLine(
    ['--store', 'memory:this-process', '--tenant', tenant, ...args.map((arg) => vars[arg] ?? arg)],
    { stdout, stderr, stdin: new PassThrough(), env: {} },
    {
      parse: () => ({ kind: 'sqlite', target: 'memory', shown: 'memory:this-process', secrets: [] }),
      open: async () => opened,
    },
  );
  return { code, stdout: out, stderr: err };
}

const steps = JSON.parse(process.argv[2] ?? '[]') as Step[];
for (const step of steps) {
  let result: Record<string, unknown>;
  if ('ask' in step) result = await ask(step.ask.as, step.ask.amount);
  else if ('cli' in step) result = await cli(step.cli);
  else if ('owner' in step) {
    const record = await store.get({ tenant, key: vars.$KEY ?? '' });
    vars.$OWNER = record?.owner ?? '';
    result = { owner: vars.$OWNER };
  } else if ('forget' in step) result = { forgot: await store.forget({ tenant }) };
  else if ('record' in step) result = { record: await store.get({ tenant, key: vars.$KEY ?? '' }) };
  else if ('approveAhead' in step) {
    const decided = await guards.a.approve(
      { tool: 'refund', arguments: { orderId: 'A-1', amount: step.approveAhead }, runId: 'run-1', policy },
      { by: 'lead@example.com' },
    );
    if ('record' in decided) vars.$KEY = decided.record.key;
    result = { approveAhead: decided.status };
  } else {
    cliStore = withoutApprovals;
    result = { withoutApprovals: true };
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
