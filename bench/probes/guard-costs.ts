// Probe behind bench/RESULTS.md (not a benchmark suite): what one guard.run costs on a MemoryStore
// besides time, which load does not move: promises made and microtask callbacks run per call
// (async_hooks), and bytes allocated per call (the inspector's sampling heap profiler, counting
// objects the GC already collected too), with the functions that allocate most.
//   npx tsx --conditions=@toolfence/source bench/probes/guard-costs.ts first|repeat [calls]
import { createHook } from 'node:async_hooks';
import { Session } from 'node:inspector/promises';
import { Guard, MemoryStore } from '@toolfence/core';
import { idempotentPolicy, outcome100, toolArguments } from '../lib/workloads.js';

const mode = process.argv[2] === 'repeat' ? 'repeat' : 'first';
const calls = Number(process.argv[3] ?? 20_000);
const guard = new Guard({ store: new MemoryStore() });
const call = (id: number) =>
  guard.run(
    { tool: 'place_order', runId: 'run-1', arguments: toolArguments(100, id), policy: idempotentPolicy },
    () => outcome100(id),
  );
for (let id = 0; id < 1_000; id++) await call(id);
let next = 1_000;
const one = (index: number) => (mode === 'first' ? call(next++) : call(index % 1_000));

let promises = 0;
let callbacks = 0;
const hook = createHook({
  init: (_id, type) => {
    if (type === 'PROMISE') promises++;
  },
  before: () => {
    callbacks++;
  },
});
hook.enable();
for (let index = 0; index < 1_000; index++) await one(index);
hook.disable();
console.log(`${mode}: ${promises / 1_000} promises and ${callbacks / 1_000} microtask callbacks per call`);

interface Node {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: Node[];
}
const session = new Session();
session.connect();
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 512,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
for (let index = 0; index < calls; index++) await one(index);
const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: Node } };
const bytes = new Map<string, number>();
let total = 0;
const walk = (node: Node): void => {
  const { functionName, url, lineNumber } = node.callFrame;
  const name = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(packages|node_modules)\//, '$1/')}:${lineNumber + 1}`;
  total += node.selfSize;
  bytes.set(name, (bytes.get(name) ?? 0) + node.selfSize);
  for (const child of node.children) walk(child);
};
walk(profile.head);
console.log(`${mode}: ${(total / calls).toFixed(0)} bytes allocated per call (sampled); most:`);
for (const [name, size] of [...bytes].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
  console.log(`${(size / calls).toFixed(0).padStart(7)} B  ${name}`);
}
