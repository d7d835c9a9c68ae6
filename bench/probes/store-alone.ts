// Probe behind bench/RESULTS.md (not a benchmark suite): npx tsx --conditions=@toolfence/source bench/probes/store-alone.ts
// The memory path's parts, process CPU per call: idempotencyKey alone; key + MemoryStore claim +
// complete called directly (no guard); key + claim of a completed record + decode; guard.run.
import { randomUUID } from 'node:crypto';
import {
  Guard,
  Idempotency,
  idempotencyKey,
  jsonOutcomeCodec,
  MemoryStore,
} from '../../packages/core/src/index.js';

const args = (id: number) => ({
  orderId: `A-${id}`,
  amount: 42.5,
  currency: 'EUR',
  email: 'ana@example.com',
  notify: true,
});
const out = (id: number) => {
  const s = { ok: true, confirmation: `C-${id}`, detail: '' };
  return { ...s, detail: 'x'.repeat(100 - JSON.stringify(s).length) };
};
const store = new MemoryStore();
const guard = new Guard({ store: new MemoryStore() });
const policy = { kind: Idempotency.IDEMPOTENT };
const key = (id: number) =>
  idempotencyKey({ tenant: 'default', runId: 'run-1', tool: 'place_order', arguments: args(id) });
const opts = (k: string) => ({
  tool: 'place_order',
  fingerprint: k,
  owner: randomUUID(),
  leaseMs: 30000,
  retentionMs: 86400000,
  mode: 'at-least-once' as const,
  maxAttempts: 3,
  checkFingerprint: false,
});
let n1 = 1e6,
  n2 = 2e6;
const direct = async (id: number) => {
  const k = key(id);
  const o = opts(k);
  const c = await store.claim({ tenant: 'default', key: k }, o);
  if (c.status !== 'acquired') throw new Error();
  await store.complete(
    { tenant: 'default', key: k },
    { fence: c.fence, owner: o.owner },
    jsonOutcomeCodec.encode(out(id)),
    86400000,
  );
};
const directRepeat = async (id: number) => {
  const k = key(id % 1000);
  const c = await store.claim({ tenant: 'default', key: k }, opts(k));
  if (c.status !== 'completed') throw new Error(c.status);
  return jsonOutcomeCodec.decode(c.record.outcome!);
};
const g = (id: number) =>
  guard.run({ tool: 'place_order', runId: 'run-1', arguments: args(id), policy }, () => out(id));
for (let i = 0; i < 1000; i++) {
  await direct(i);
  await g(i);
}
const work: [string, (i: number) => unknown][] = [
  ['key alone', key],
  ['key + store claim + complete', () => direct(n1++)],
  ['guard first call', () => g(n2++)],
  ['key + store claim (completed) + decode', directRepeat],
  ['guard repeat', (i) => g(i % 1000)],
];
const N = 3000;
const s: Record<string, number[]> = {};
const time = async (op: (i: number) => unknown) => {
  const t = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const r = op(i);
    if (r instanceof Promise) await r;
  }
  const d = process.cpuUsage(t);
  return (d.user + d.system) / N;
};
for (const [, op] of work) await time(op);
for (let r = 0; r < 11; r++)
  for (let o = 0; o < work.length; o++) {
    const [name, op] = work[(r + o) % work.length]!;
    s[name] ??= [];
    s[name].push(await time(op));
  }
const med = (v: number[]) => [...v].sort((a, b) => a - b)[5]!;
const base = med(s['key alone']!);
for (const [name, v] of Object.entries(s))
  console.log(name.padEnd(40), med(v).toFixed(2), 'µs CPU', (med(v) / base).toFixed(2), '× key');
