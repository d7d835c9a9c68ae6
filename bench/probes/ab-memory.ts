// Probe behind bench/RESULTS.md (not a benchmark suite). First copy the core to compare against:
//   git show main:packages/core/src ... or: cp -r <checkout of main>/packages/core/src .tmp/core-before
// then: npx tsx bench/probes/ab-memory.ts [rounds] [swap|noswap] [path of the copy's index.js]
// A/B in one process: the guard of main (copied before the change) against this branch's, on a
// MemoryStore each, interleaved rounds, against idempotencyKey alone (each side its own).
import * as after from '../../packages/core/src/index.js';

// A path, not a literal import: the copy exists only where it was made (.tmp is not in the repo).
const beforePath = process.argv[4] ?? '../../.tmp/core-before/index.js';
const before = (await import(beforePath)) as typeof after;

const args = (id: number) => ({
  orderId: `A-${id}`,
  amount: 42.5,
  currency: 'EUR',
  email: 'ana@example.com',
  notify: true,
});
const out = (id: number) => {
  const shell = { ok: true, confirmation: `C-${id}`, detail: '' };
  return { ...shell, detail: 'x'.repeat(100 - JSON.stringify(shell).length) };
};
function side(core: typeof after) {
  const guard = new core.Guard({ store: new core.MemoryStore() });
  const policy = { kind: core.Idempotency.IDEMPOTENT };
  const call = (id: number) =>
    guard.run({ tool: 'place_order', runId: 'run-1', arguments: args(id), policy }, () => out(id));
  let next = 1000;
  return {
    prepare: async () => {
      for (let i = 0; i < 1000; i++) await call(i);
    },
    first: () => call(next++),
    repeat: (i: number) => call(i % 1000),
    key: (i: number) =>
      core.idempotencyKey({ tenant: 'default', runId: 'run-1', tool: 'place_order', arguments: args(i) }),
  };
}
const sides =
  process.argv[3] === 'swap'
    ? { after: side(after), before: side(before as unknown as typeof after) }
    : { before: side(before as unknown as typeof after), after: side(after) };
await sides.before.prepare();
await sides.after.prepare();
const N = 3000;
async function time(op: (i: number) => unknown) {
  const t = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const r = op(i);
    if (r instanceof Promise) await r;
  }
  const d = process.cpuUsage(t);
  return (d.user + d.system) / N;
}
const samples: Record<string, number[]> = {};
const work = Object.entries(sides).flatMap(
  ([name, s]) =>
    [
      [`${name} first`, s.first],
      [`${name} repeat`, s.repeat],
      [`${name} key`, s.key],
    ] as const,
);
for (const [, op] of work) await time(op);
const rounds = Number(process.argv[2] ?? 15);
for (let r = 0; r < rounds; r++)
  for (let o = 0; o < work.length; o++) {
    const [name, op] = work[(r + o) % work.length]!;
    samples[name] ??= [];
    samples[name].push(await time(op));
  }
const med = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
for (const [name, v] of Object.entries(samples)) console.log(name.padEnd(14), med(v).toFixed(2), 'µs');
for (const k of ['first', 'repeat', 'key'])
  console.log(`${k}: after/before`, (med(samples[`after ${k}`]!) / med(samples[`before ${k}`]!)).toFixed(3));
console.log(
  'ratio vs key: before first',
  (med(samples['before first']!) / med(samples['before key']!)).toFixed(2),
  'after first',
  (med(samples['after first']!) / med(samples['after key']!)).toFixed(2),
  'before repeat',
  (med(samples['before repeat']!) / med(samples['before key']!)).toFixed(2),
  'after repeat',
  (med(samples['after repeat']!) / med(samples['after key']!)).toFixed(2),
);
