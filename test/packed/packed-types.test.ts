// Issue 16, item 4: a fresh project compiles against the PACKED tarballs (what a registry user
// installs), without casts: `npm run build`, `npm pack` of every package into .tmp/, the
// tarballs installed into a temporary project with the peers linked from the root node_modules,
// then `tsc --noEmit` over the quickstarts (test/packed/fixture) and the adapters' type tests
// (packages/langchain/test/*.test-d.ts, packages/vercel-ai/test/*.test-d.ts,
// packages/openai-agents/test/*.test-d.ts), and the durable-step recipes (examples/durable/*.ts
// but Workflow DevKit's, whose engine is not linked).
// @toolfence/mastra needs Node >= 22.13: its packed test is packages/mastra/test/packed.test.ts,
// run on Node 24 by test/mastra/run.sh.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const packages = ['core', 'stores', 'langchain', 'vercel-ai', 'openai-agents', 'durable'];
/** Peers (and what the fixture imports) linked from the workspace install. */
const linked = [
  '@langchain/core',
  '@langchain/langgraph',
  '@openai/agents-core',
  '@types/node',
  '@types/pg',
  'ai',
  'better-sqlite3',
  'ioredis',
  'langchain',
  'pg',
  'tsx',
  'vitest',
  'zod',
];

function run(command: string, args: string[], cwd: string): string {
  try {
    return execFileSync(command, args, {
      cwd,
      encoding: 'utf8',
      stdio: 'pipe',
      env: { ...process.env, NO_COLOR: '1' },
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout ?? ''}\n${stderr ?? ''}`);
  }
}

describe('the packed tarballs in a fresh project', () => {
  mkdirSync(join(root, '.tmp'), { recursive: true });
  const work = mkdtempSync(join(root, '.tmp', 'packed-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('type-check the quickstarts and the type tests without casts; a user store runs the conformance suite under node:test', {
    // CPU-bound (build, pack, install, tsc): two full runs at once on two cores took over 240 s.
    timeout: 600_000,
  }, () => {
    run('npm', ['run', 'build'], root);
    const tarballs = join(work, 'tarballs');
    mkdirSync(tarballs);
    for (const name of packages) {
      run('npm', ['pack', '--pack-destination', tarballs, '--silent'], join(root, 'packages', name));
    }
    const files = readdirSync(tarballs).filter((file) => file.endsWith('.tgz'));
    expect(files.sort()).toEqual([
      'toolfence-core-0.1.0.tgz',
      'toolfence-durable-0.1.0.tgz',
      'toolfence-langchain-0.1.0.tgz',
      'toolfence-openai-agents-0.1.0.tgz',
      'toolfence-stores-0.1.0.tgz',
      'toolfence-vercel-ai-0.1.0.tgz',
    ]);

    const project = join(work, 'project');
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({
        name: 'fresh-project',
        private: true,
        type: 'module',
        dependencies: Object.fromEntries(
          files.map((file) => [
            `@toolfence/${file.replace(/^toolfence-/, '').replace(/-0\.1\.0\.tgz$/, '')}`,
            `file:${join(tarballs, file)}`,
          ]),
        ),
      }),
    );
    // The tarballs only (their one dependency is @toolfence/core, which is among them); the
    // peers are linked below, so nothing is fetched and the workspace install is not touched.
    run(
      'npm',
      ['install', '--offline', '--legacy-peer-deps', '--no-audit', '--no-fund', '--ignore-scripts'],
      project,
    );
    for (const name of linked) {
      const target = join(project, 'node_modules', name);
      mkdirSync(dirname(target), { recursive: true });
      symlinkSync(join(root, 'node_modules', name), target, 'dir');
    }
    // What was installed is the packed build: dist and README, no workspace link.
    for (const name of packages) {
      const installed = readdirSync(join(project, 'node_modules', '@toolfence', name));
      expect(installed).toEqual(expect.arrayContaining(['README.md', 'dist', 'package.json']));
    }

    const sources = join(project, 'src');
    mkdirSync(sources);
    cpSync(join(root, 'test', 'packed', 'fixture'), sources, { recursive: true });
    cpSync(
      join(root, 'packages', 'langchain', 'test', 'fence-tool.test-d.ts'),
      join(sources, 'langchain.test-d.ts'),
    );
    cpSync(
      join(root, 'packages', 'vercel-ai', 'test', 'fence-tools.test-d.ts'),
      join(sources, 'vercel-ai.test-d.ts'),
    );
    // Its typed policies rest on an overload of the SDK's tool() declared in the packed .d.ts.
    cpSync(
      join(root, 'packages', 'openai-agents', 'test', 'fence-tool.test-d.ts'),
      join(sources, 'openai-agents.test-d.ts'),
    );
    // The durable-step recipes of docs/durable-steps.md that compile without an engine installed.
    for (const recipe of ['langgraph-task.ts', 'temporal-activity.ts', 'inngest-step.ts', 'restate-run.ts']) {
      cpSync(join(root, 'examples', 'durable', recipe), join(sources, `durable-${recipe}`));
    }
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          verbatimModuleSyntax: true,
        },
        include: ['src'],
      }),
    );
    const output = run(
      process.execPath,
      [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project],
      project,
    );
    expect(output).toBe('');

    // Issue 23: the stores read their .lua and .sql files from the installed package at run time
    // (nothing generated is checked in): the packed build loads them, and a SQLite store made from
    // it migrates and claims. RedisStore and PostgresStore load theirs when constructed/imported.
    writeFileSync(
      join(project, 'stores-load.mjs'),
      [
        "import { mkdtempSync, rmSync } from 'node:fs';",
        "import { tmpdir } from 'node:os';",
        "import { join } from 'node:path';",
        "import { Redis } from 'ioredis';",
        "import pg from 'pg';",
        "import { PostgresStore } from '@toolfence/stores/postgres';",
        "import { RedisStore } from '@toolfence/stores/redis';",
        "import { SQLiteStore } from '@toolfence/stores/sqlite';",
        'const client = new Redis({ lazyConnect: true });',
        'const redisStore = new RedisStore({ client });',
        'const commands = Object.keys(Object.getPrototypeOf(client)).concat(Object.keys(client));',
        "console.log('redis commands', commands.filter((name) => name.startsWith('toolfence_') && !name.endsWith('Buffer')).length);",
        'await redisStore.close();',
        'client.disconnect();',
        'const pool = new pg.Pool({ max: 1 });',
        'new PostgresStore({ pool });',
        'await pool.end();',
        "const directory = mkdtempSync(join(tmpdir(), 'toolfence-packed-'));",
        "const store = new SQLiteStore({ path: join(directory, 'records.db'), watchWal: false });",
        "console.log('sqlite migrations', (await store.ensureSchema()).applied.join(','));",
        "const claim = await store.claim({ tenant: 't', key: 'k' }, { tool: 'x', fingerprint: 'f', owner: 'o',",
        "  leaseMs: 1000, retentionMs: 1000, mode: 'at-most-once', maxAttempts: 1, checkFingerprint: true });",
        "console.log('sqlite claim', claim.status);",
        'await store.close();',
        'rmSync(directory, { recursive: true, force: true });',
        '',
      ].join('\n'),
    );
    const loaded = run(process.execPath, [join(project, 'stores-load.mjs')], project);
    expect(loaded).toContain('redis commands 13'); // one per statements/*.lua, watch-1.lua, decide-1.lua and index-claims-1.lua included
    expect(loaded).toContain('sqlite migrations 1,2,3,4,5,6');
    expect(loaded).toContain('sqlite claim acquired');

    // Issue 15: a user's own store, in this project, runs the conformance suite from the packed
    // @toolfence/core under node:test (no vitest), with only the public API. The store is the
    // Map store of test/conformance (written from docs/store-contract.md), with no bug switched on.
    const suite = join(project, 'conformance');
    mkdirSync(suite);
    cpSync(join(root, 'test', 'conformance', 'mutants', 'map-store.ts'), join(suite, 'my-store.ts'));
    writeFileSync(
      join(suite, 'my-store.test.ts'),
      [
        "import { registerStoreConformance } from '@toolfence/core/testing/node';",
        "import { MapStore } from './my-store.ts';",
        "registerStoreConformance('MyStore', () => new MapStore(), {",
        '  createUnavailableStore: () => new MapStore({ down: true }),',
        '});',
        '',
      ].join('\n'),
    );
    const report = run(
      process.execPath,
      ['--import', 'tsx', '--test', join(suite, 'my-store.test.ts')],
      project,
    );
    const passed = Number(/^# pass (\d+)$/m.exec(report)?.[1]);
    expect(/^# fail 0$/m.test(report), report).toBe(true);
    expect(passed).toBeGreaterThanOrEqual(45);
  });
});
