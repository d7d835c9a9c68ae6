// The CLI in a shell pipeline and with durations: `toolfence list | head -1` is not an error
// (the reader left; the command's own exit code stands), and a duration without its unit is
// refused before anything is settled.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RedisStore } from '@toolfence/stores/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions, DAY_MS } from '../../../test/support/claims.js';
import { connectRedis, deletePrefix, randomPrefix, redisUrl } from '../../../test/support/redis.js';
import { runCli } from '../../../test/support/run-cli.js';

const binScript = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
const prefix = randomPrefix('cli-pipe');
const tenant = 'pipe';
let client: Awaited<ReturnType<typeof connectRedis>>;
let store: RedisStore;
const keys: string[] = [];

beforeAll(async () => {
  client = await connectRedis();
  store = new RedisStore({ client, prefix });
  // Enough indeterminate records that the listing outlasts the reader.
  for (let index = 0; index < 400; index++) {
    const key = index.toString(16).padStart(64, '0');
    const options = claimOptions({ mode: 'at-most-once' });
    const claim = await store.claim({ tenant, key }, options);
    if (claim.status !== 'acquired') throw new Error(`claim answered ${claim.status}`);
    await store.markIndeterminate(
      { tenant, key },
      { fence: claim.fence, owner: options.owner },
      { type: 'Timeout', message: 'no reply' },
      DAY_MS,
    );
    keys.push(key);
  }
}, 60_000);

afterAll(async () => {
  await store?.close();
  if (client !== undefined) {
    await deletePrefix(client, prefix);
    client.disconnect();
  }
});

/** `toolfence <args> | head -1`, in a shell; the CLI's own exit code and stderr. */
function listIntoHead(args: readonly string[]): Promise<{ code: number; first: string; stderr: string }> {
  const quoted = [process.execPath, '--import', 'tsx', '--conditions=@toolfence/source', binScript, ...args]
    .map((word) => `'${word.replaceAll("'", "'\\''")}'`)
    .join(' ');
  return new Promise((resolve, reject) => {
    const shell = spawn(
      'bash',
      ['-c', `${quoted} 2>"$ERRFILE" | head -1; echo "exit=\${PIPESTATUS[0]}"; cat "$ERRFILE"`],
      {
        env: { ...process.env, TOOLFENCE_STORE: '', ERRFILE: `/tmp/${prefix}.err` },
      },
    );
    let out = '';
    shell.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    shell.on('error', reject);
    shell.on('close', () => {
      const [first = '', exitLine = '', ...rest] = out.split('\n');
      resolve({ code: Number(exitLine.replace('exit=', '')), first, stderr: rest.join('\n') });
    });
  });
}

describe('toolfence in a pipeline', () => {
  it('list | head -1: exit 0, no EPIPE stack, the first line printed', async () => {
    for (const json of [true, false]) {
      const run = await listIntoHead([
        '--store',
        redisUrl,
        '--prefix',
        prefix,
        '--tenant',
        tenant,
        'list',
        '--limit',
        '1000',
        ...(json ? ['--json'] : []),
      ]);
      expect(run.stderr).not.toContain('EPIPE');
      expect(run.code, run.stderr).toBe(0);
      if (json) expect(JSON.parse(run.first)).toMatchObject({ state: 'indeterminate', tenant });
      else expect(run.first.length).toBeGreaterThan(0);
    }
  }, 60_000);

  it('a duration without its unit is refused (exit 2) and settles nothing', async () => {
    const key = keys[0] as string;
    const base = ['--store', redisUrl, '--prefix', prefix, '--tenant', tenant];
    const resolve = await runCli([...base, 'resolve', key, '--outcome', '"paid"', '--retention', '7']);
    expect(resolve.code, resolve.stderr).toBe(2);
    expect(resolve.stderr).toContain('--retention must be a whole number with its unit');
    expect(await store.get({ tenant, key })).toMatchObject({ state: 'indeterminate' });
    const list = await runCli([...base, 'list', '--older-than', '10']);
    expect(list.code).toBe(2);
    const withUnit = await runCli([...base, 'list', '--older-than', '0s', '--limit', '1', '--json']);
    expect(withUnit.code, withUnit.stderr).toBe(0);
    expect(withUnit.records).toHaveLength(1);
    expect(withUnit.page).toMatchObject({ records: 1, more: true });
  }, 60_000);
});
