// Probe behind bench/RESULTS.md (not a benchmark suite): npx tsx --conditions=@toolfence/source bench/probes/lua-cost.ts
// Where a script's Redis CPU goes: commandstats usec per call of the real scripts (through the
// store) and of stripped-down variants, on a private redis-server (port 6455), sequential calls.
import { Redis } from 'ioredis';
import { RedisStore } from '../../packages/stores/src/redis/index.js';
import { probeClaimOptions } from '../lib/workloads.js';

const client = new Redis({ port: 6455 });
const store = new RedisStore({ client, prefix: 'lc' });
const N = 5000;
async function usecPerCall(label: string, run: (i: number) => Promise<unknown>) {
  const samples: number[] = [];
  for (let r = 0; r < 5; r++) {
    await client.config('RESETSTAT');
    for (let i = 0; i < N; i++) await run(r * N + i);
    const info = await client.info('commandstats');
    let usec = 0,
      calls = 0;
    for (const m of info.matchAll(/^cmdstat_(evalsha|eval|set|get|ping|fcall):calls=(\d+),usec=(\d+)/gm)) {
      // top-level only: the script calls, or the plain commands when no script ran
      if (m[1] === 'evalsha' || m[1] === 'eval' || m[1] === 'fcall') {
        usec += Number(m[3]);
        calls += Number(m[2]);
      }
    }
    if (calls === 0)
      for (const m of info.matchAll(/^cmdstat_(\w+):calls=(\d+),usec=(\d+)/gm))
        if (m[1] !== 'info' && m[1] !== 'config') {
          usec += Number(m[3]);
          calls += Number(m[2]);
        }
    samples.push(usec / N);
  }
  samples.sort((a, b) => a - b);
  console.log(label.padEnd(58), samples[2]!.toFixed(2), 'µs/call');
  return samples[2]!;
}
const opts = probeClaimOptions;
const outcome = JSON.stringify({ ok: true, confirmation: 'C-1', detail: 'x'.repeat(58) });
const key = (i: number) => 'k'.repeat(64 - String(i).length) + i;
// Real scripts through the store.
const claimed: { fence: number; owner: string }[] = [];
await usecPerCall('real claim, fresh key (claim-1.lua)', async (i) => {
  const r = await store.claim({ tenant: 'default', key: key(i) }, opts(`o${i}`));
  if (r.status !== 'acquired') throw new Error(r.status);
  claimed[i] = { fence: r.fence, owner: `o${i}` };
});
await usecPerCall('real complete (complete-1.lua)', async (i) => {
  const r = await store.complete({ tenant: 'default', key: key(i) }, claimed[i]!, outcome, 86400000);
  if (r.status !== 'completed') throw new Error(r.status);
});
await usecPerCall('real claim, completed record = repeat (claim-1.lua)', async (i) => {
  const r = await store.claim({ tenant: 'default', key: key(i) }, opts('x'));
  if (r.status !== 'completed') throw new Error(r.status);
});
// Variants on the same keys.
const rk = (i: number) => store.namesOf({ tenant: 'default', key: key(i) }).key;
const variant = (lua: string) => {
  let sha: string | undefined;
  return async (k: string, ...args: (string | number)[]) => {
    sha ??= (await client.script('LOAD', lua)) as string;
    return client.evalsha(sha, 1, k, ...args);
  };
};
const v0 = variant('return 1');
const v1 = variant("local raw = redis.call('GET', KEYS[1]) return 1");
const v1b = variant("return redis.call('GET', KEYS[1])");
const v2 = variant(
  "local raw = redis.call('GET', KEYS[1]) local a,b,c,d,e,f,g,h,i,j,k,l = cmsgpack.unpack(raw) return 1",
);
const v3 = variant("local t = redis.call('TIME') return 1");
const v4 = variant(
  "local raw = redis.call('GET', KEYS[1]) local a,b,c,d,e,f,g,h,i,j,k,l = cmsgpack.unpack(raw) return {2,0,a,b,c,d,e,f,h,i,j or false,k or false,l or false}",
);
const v5 = variant("redis.call('PUBLISH', ARGV[1], 'completed') return 1");
const v6 = variant(
  "local p = cmsgpack.pack('completed',1,1,ARGV[1],1700000000000,1800000000000,86400000,'place_order',ARGV[2],ARGV[3],nil,nil) redis.call('SET', KEYS[1], p, 'PXAT', 1800000000000) return 1",
);
const v7 = variant("redis.call('SET', KEYS[1], ARGV[1], 'PXAT', 1800000000000) return 1");
await usecPerCall("EVALSHA 'return 1'", (i) => v0(rk(i)));
await usecPerCall('EVALSHA GET (reply 1)', (i) => v1(rk(i)));
await usecPerCall('EVALSHA GET (reply the raw value)', (i) => v1b(rk(i)));
await usecPerCall('EVALSHA GET + cmsgpack.unpack (reply 1)', (i) => v2(rk(i)));
await usecPerCall('EVALSHA GET + unpack + whole-record reply (a repeat minimum)', (i) => v4(rk(i)));
await usecPerCall('EVALSHA TIME', (i) => v3(rk(i)));
await usecPerCall('EVALSHA PUBLISH (no subscriber)', (i) => v5(rk(i), `lc:s:{${i}}`));
await usecPerCall('EVALSHA cmsgpack.pack 12 fields + SET PXAT (fresh key)', (i) =>
  v6(`lc:v6:${i}`, `o${i}`, 'f'.repeat(64), outcome),
);
await usecPerCall('EVALSHA SET PXAT of a 100-byte value (fresh key)', (i) => v7(`lc:v7:${i}`, outcome));
await usecPerCall('native GET of a record (no script)', (i) => client.get(rk(i)));
await usecPerCall('native SET NX PX (fresh key)', (i) => client.set(`lc:n:${i}`, outcome, 'PX', 30000, 'NX'));
await usecPerCall('native SET NX PX GET (existing key)', (i) =>
  client.set(rk(i), outcome, 'PX', 30000, 'NX', 'GET'),
);
await usecPerCall('native PING', () => client.ping());
await store.close();
client.disconnect();
