// The packed @toolfence/mastra in a fresh project, as a registry user installs it (test/packed
// does this for the other packages on the workspace's Node 20, which cannot load @mastra/core):
// @toolfence/core and @toolfence/mastra are built and packed, the tarballs installed with
// Mastra, zod and ai linked from the lane's install, then the quickstart fixture
// (test/mastra/fixture) type-checks against the packed .d.ts, its @ts-expect-error lines
// included, and runs on the packed JavaScript.
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const lane = dirname(
  dirname(realpathSync(join(root, 'packages', 'mastra', 'node_modules', '@mastra', 'core'))),
);
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

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

describe('the packed @toolfence/mastra in a fresh project', () => {
  mkdirSync(join(root, '.tmp'), { recursive: true });
  const work = mkdtempSync(join(root, '.tmp', 'packed-mastra-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('type-checks and runs the quickstart on the packed build', { timeout: 600_000 }, () => {
    for (const name of ['core', 'mastra'])
      run(process.execPath, [tsc, '-p', 'tsconfig.json'], join(root, 'packages', name));
    const tarballs = join(work, 'tarballs');
    mkdirSync(tarballs);
    for (const name of ['core', 'mastra']) {
      run('npm', ['pack', '--pack-destination', tarballs, '--silent'], join(root, 'packages', name));
    }
    const files = readdirSync(tarballs).sort();
    expect(files).toEqual(['toolfence-core-0.1.0.tgz', 'toolfence-mastra-0.1.0.tgz']);
    const project = join(work, 'project');
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({
        name: 'fresh-project',
        private: true,
        type: 'module',
        dependencies: {
          '@toolfence/core': `file:${join(tarballs, files[0] as string)}`,
          '@toolfence/mastra': `file:${join(tarballs, files[1] as string)}`,
        },
      }),
    );
    run(
      'npm',
      ['install', '--offline', '--legacy-peer-deps', '--no-audit', '--no-fund', '--ignore-scripts'],
      project,
    );
    const linked: [string, string][] = [
      ['@mastra/core', lane],
      ['zod', lane],
      ['ai', lane],
      ['@types/node', join(root, 'node_modules')],
    ];
    for (const [name, from] of linked) {
      const target = join(project, 'node_modules', name);
      mkdirSync(dirname(target), { recursive: true });
      symlinkSync(join(from, name), target, 'dir');
    }
    const installed = readdirSync(join(project, 'node_modules', '@toolfence', 'mastra'));
    expect(installed).toEqual(expect.arrayContaining(['README.md', 'dist', 'package.json']));
    const sources = join(project, 'src');
    cpSync(join(root, 'test', 'mastra', 'fixture'), sources, { recursive: true });
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
    expect(run(process.execPath, [tsc, '-p', project], project)).toBe('');
    // Node 24 runs the TypeScript fixture itself (type stripping); the imports are the packed JS.
    const output = run(process.execPath, [join(sources, 'quickstart-mastra.ts')], project);
    expect(output).toContain('refunds 1');
  });
});
