// Probe behind bench/RESULTS.md (not a benchmark suite), issue 22 run 3:
//   redis-server --port 6471 --save '' --appendonly no --daemonize yes
//   BENCH_REDIS_PORTS=6471 npx tsx --conditions=@toolfence/source bench/probes/redis-scripts.ts
// Redis CPU (commandstats usec of the top-level EVALSHA/EVAL) per call of each store script on the
// guard's paths, sequential calls on a PRIVATE redis-server (it runs CONFIG RESETSTAT): fresh
// claim, complete, claim of a completed record (repeat), get; median of 5 windows of 3,000 calls.
// Beside it, the server process's CPU per call (INFO cpu, user + sys: getrusage, so a busy
// machine that deschedules redis-server mid-command does not inflate it as it does commandstats'
// wall-clock usec; it includes reading the request and writing the reply), and the commands the
// scripts ran, per call (exact, whatever the load).
import { Redis } from 'ioredis';
import { RedisStore } from '../../packages/stores/src/redis/index.js';
import { probeClaimOptions } from '../lib/workloads.js';

const port = Number((process.env.BENCH_REDIS_PORTS ?? '6471').split(',')[0]);
const client = new Redis({ port });
const store = new RedisStore({ client, prefix: `rs${Date.now()}` });
const N = Math.round(3000 * Number(process.env.BENCH_SCALE ?? 1));
const cpuSeconds = async () => {
  const info = await client.info('cpu');
  return Number(/used_cpu_user:([\d.]+)/.exec(info)![1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)![1]);
};
async function usecPerCall(label: string, run: (i: number) => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  const cpu: number[] = [];
  let inner: string[] = [];
  for (let r = 0; r < 5; r++) {
    await client.config('RESETSTAT');
    const before = await cpuSeconds();
    for (let i = 0; i < N; i++) await run(r * N + i);
    cpu.push((((await cpuSeconds()) - before) * 1e6) / N);
    const info = await client.info('commandstats');
    let usec = 0;
    inner = [];
    for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
      if (m[1] === 'evalsha' || m[1] === 'eval') usec += Number(m[3]);
      else if (m[1] !== 'info' && m[1] !== 'config') inner.push(`${m[1]} ${(Number(m[2]) / N).toFixed(2)}`);
    }
    samples.push(usec / N);
  }
  samples.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(34)} usec ${samples[2]!.toFixed(2)} (min ${samples[0]!.toFixed(2)}); server CPU ${cpu[2]!.toFixed(2)} µs/call; inside: ${inner.sort().join(', ')}`,
  );
  return samples[2]!;
}
const opts = probeClaimOptions;
const outcome = JSON.stringify({ ok: true, confirmation: 'C-1', detail: 'x'.repeat(58) });
const ref = (i: number) => ({ tenant: 'default', key: 'k'.repeat(64 - String(i).length) + i });
const claimed: { fence: number; owner: string }[] = [];
const claim = await usecPerCall('claim, fresh key', async (i) => {
  const r = await store.claim(ref(i), opts(`o${i}`));
  if (r.status !== 'acquired') throw new Error(r.status);
  claimed[i] = { fence: r.fence, owner: `o${i}` };
});
const complete = await usecPerCall('complete', async (i) => {
  const r = await store.complete(ref(i), claimed[i]!, outcome, 86400000);
  if (r.status !== 'completed') throw new Error(r.status);
});
const repeat = await usecPerCall('claim, completed record (repeat)', async (i) => {
  const r = await store.claim(ref(i), opts('x'));
  if (r.status !== 'completed') throw new Error(r.status);
});
await usecPerCall('get, completed record', async (i) => {
  if ((await store.get(ref(i)))?.state !== 'completed') throw new Error('get');
});
console.log('first call (claim + complete)'.padEnd(48), (claim + complete).toFixed(2), 'µs');
console.log('repeat'.padEnd(48), repeat.toFixed(2), 'µs');
await store.close();
client.disconnect();
