// The node:test entry (`@toolfence/core/testing/node`) in a real `node --test` run of MemoryStore,
// in a child process whose module loader refuses vitest: the entry must not need it.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { MemoryStore } from '@toolfence/core';
import { storeConformanceCases } from '@toolfence/core/testing';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

it('registerStoreConformance runs every case under node --test, without vitest', () => {
  const names = storeConformanceCases(() => new MemoryStore(), {
    createUnavailableStore: () => new MemoryStore(),
  }).map((conformanceCase) => conformanceCase.name);
  const run = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--import',
      './test/conformance/no-vitest-loader.mjs',
      '--conditions=@toolfence/source',
      '--test',
      '--test-reporter=tap',
      'test/conformance/memory-store.node.ts',
    ],
    { cwd: root, encoding: 'utf8', timeout: 120_000 },
  );
  const output = `${run.stdout}\n${run.stderr}`;
  expect(run.status, output.slice(-4000)).toBe(0);
  const passed = output.match(/^# pass (\d+)$/m)?.[1];
  const failed = output.match(/^# fail (\d+)$/m)?.[1];
  expect(Number(failed)).toBe(0);
  // Every case, plus the describe block around them.
  expect(Number(passed)).toBe(names.length);
  for (const name of names) expect(output).toContain(`- ${name}`);
}, 150_000);
