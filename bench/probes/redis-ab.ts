// Probe behind the issue-31 Redis rows (not a benchmark suite): this tree's RedisStore against
// another copy of packages/stores/src (its redis/index.ts as the first argument; e.g. `git archive
// <commit> packages/stores/src | tar -x -C .tmp/old`, plus its package.json with another
// version, so the two stores' script commands differ) and the bare native design, on a PRIVATE
// redis-server (it runs CONFIG RESETSTAT), interleaved windows of sequential calls:
//   redis-server --port 6471 --save '' --appendonly no --daemonize yes
//   BENCH_REDIS_PORTS=6471 npx tsx --conditions=@toolfence/source bench/probes/redis-ab.ts \
//     .tmp/old/packages/stores/src/redis/index.ts [rounds]
// Per call: the server process's CPU (INFO cpu, user + sys: getrusage, so a loaded machine that
// deschedules redis-server does not inflate it as it does commandstats' wall-clock usec),
// commandstats usec of the top-level commands, and the commands run inside scripts (exact).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { RedisStore } from '../../packages/stores/src/redis/index.js';
import { probeClaimOptions } from '../lib/workloads.js';

type StoreClass = typeof RedisStore;
const port = Number((process.env.BENCH_REDIS_PORTS ?? '6471').split(',')[0]);
const client = new Redis({ port });
const N = Math.round(2000 * Number(process.env.BENCH_SCALE ?? 1));
const [oldModule, roundsArgument] = process.argv.slice(2);
const rounds = Number(roundsArgument ?? 5);
const outcome = JSON.stringify({ ok: true, confirmation: 'C-1', detail: 'x'.repeat(58) });

const stores: [string, InstanceType<StoreClass>][] = [
  ['new', new RedisStore({ client, prefix: `ab-new-${Date.now()}` })],
];
if (oldModule !== undefined && oldModule !== '') {
  const old = (await import(pathToFileURL(resolve(oldModule)).href)) as {
    RedisStore: StoreClass;
  };
  stores.push(['old', new old.RedisStore({ client, prefix: `ab-old-${Date.now()}` })]);
}

const cpuSeconds = async () => {
  const info = await client.info('cpu');
  return Number(/used_cpu_user:([\d.]+)/.exec(info)![1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)![1]);
};

interface Window {
  cpu: number;
  usec: number;
  inside: string;
}
async function window(run: (i: number) => Promise<unknown>, from: number): Promise<Window> {
  await client.config('RESETSTAT');
  const before = await cpuSeconds();
  for (let i = 0; i < N; i++) await run(from + i);
  const cpu = (((await cpuSeconds()) - before) * 1e6) / N;
  const info = await client.info('commandstats');
  let usec = 0;
  const inside: string[] = [];
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    if (m[1] === 'info' || m[1] === 'config') continue;
    if (m[1] === 'evalsha' || m[1] === 'eval' || m[1] === 'set') usec += Number(m[3]);
    if (m[1] !== 'evalsha' && m[1] !== 'eval') inside.push(`${m[1]} ${(Number(m[2]) / N).toFixed(2)}`);
  }
  return { cpu, usec: usec / N, inside: inside.sort().join(', ') };
}

const ref = (i: number) => ({ tenant: 'default', key: 'k'.repeat(64 - String(i).length) + i });
const paths: [string, (i: number) => Promise<unknown>][] = [];
for (const [name, store] of stores) {
  paths.push([
    `${name}: first call (claim + complete)`,
    async (i) => {
      const owner = `o${i}`;
      const claimed = await store.claim(ref(i), probeClaimOptions(owner));
      if (claimed.status !== 'acquired') throw new Error(claimed.status);
      const done = await store.complete(ref(i), { fence: claimed.fence, owner }, outcome, 86400000);
      if (done.status !== 'completed') throw new Error(done.status);
    },
  ]);
  paths.push([
    `${name}: repeat (claim of a completed record)`,
    async (i) => {
      const repeat = await store.claim(ref(i % N), probeClaimOptions('x'));
      if (repeat.status !== 'completed') throw new Error(repeat.status);
    },
  ]);
}
const bareKey = (i: number) => `ab-bare-${i}`;
paths.push([
  'bare: SET NX PX + SET XX PX',
  async (i) => {
    await client.set(bareKey(i), '{"state":"in_progress"}', 'PX', 30000, 'NX');
    await client.set(bareKey(i), outcome, 'PX', 86400000, 'XX');
  },
]);
paths.push([
  'bare: SET NX PX GET (repeat)',
  async (i) => {
    if ((await client.set(bareKey(i % N), '{"state":"in_progress"}', 'PX', 30000, 'NX', 'GET')) === null)
      throw new Error('bare repeat found nothing');
  },
]);

const results = new Map<string, Window[]>(paths.map(([label]) => [label, []]));
for (let round = 0; round < rounds; round++) {
  for (const [label, run] of paths) {
    // First calls take fresh keys each round; repeats read the keys of round 0.
    const from = label.includes('repeat') ? 0 : round * N;
    results.get(label)!.push(await window(run, from));
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const [label, windows] of results) {
  console.log(
    `${label.padEnd(42)} server CPU ${median(windows.map((w) => w.cpu)).toFixed(2)} µs/call; usec ${median(windows.map((w) => w.usec)).toFixed(2)}; inside: ${windows.at(-1)!.inside}`,
  );
}
for (const [, store] of stores) await store.close();
client.disconnect();
