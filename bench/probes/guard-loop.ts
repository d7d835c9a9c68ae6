// Probe behind bench/RESULTS.md (not a benchmark suite): guard.run on a MemoryStore in a loop, for
// a profiler or an instruction counter. Same workload as the memory suite (~100 B arguments).
//   node --cpu-prof --cpu-prof-dir=.tmp/prof --import tsx --conditions=@toolfence/source bench/probes/guard-loop.ts first 200000
//   valgrind --tool=callgrind node --import tsx ... bench/probes/guard-loop.ts repeat 20000
// Modes: first (fresh arguments each call), repeat (one of 1,000 completed calls), key (idempotencyKey alone).
import { Guard, idempotencyKey, MemoryStore } from '@toolfence/core';
import { idempotentPolicy, outcome100, toolArguments } from '../lib/workloads.js';

const mode = process.argv[2] ?? 'first';
const calls = Number(process.argv[3] ?? 100_000);
const guard = new Guard({ store: new MemoryStore() });
const call = (id: number) =>
  guard.run(
    { tool: 'place_order', runId: 'run-1', arguments: toolArguments(100, id), policy: idempotentPolicy },
    () => outcome100(id),
  );
for (let id = 0; id < 1_000; id++) await call(id);
let next = 1_000;
const started = process.cpuUsage();
for (let index = 0; index < calls; index++) {
  if (mode === 'first') await call(next++);
  else if (mode === 'repeat') await call(index % 1_000);
  else
    idempotencyKey({
      tenant: 'default',
      runId: 'run-1',
      tool: 'place_order',
      arguments: toolArguments(100, index),
    });
}
const used = process.cpuUsage(started);
console.log(mode, ((used.user + used.system) / calls).toFixed(2), 'µs CPU/call');
