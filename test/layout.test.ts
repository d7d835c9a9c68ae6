// Where tests live and how they are named (test/README.md): a package's own tests are in the
// package, and a file that names a store is `<subject>.<store>.test.ts`, so that
// `npx vitest run .redis.` selects every Redis file.
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const stores = ['redis', 'postgres', 'sqlite', 'dynamodb', 'memory'];
const packages = readdirSync(join(root, 'packages'));

function testFiles(directory: string): string[] {
  return readdirSync(join(root, directory), { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.test(-d)?\.ts$/.test(name))
    .map((name) => relative(root, join(root, directory, name)));
}

const files = [
  ...testFiles('test'),
  ...packages
    .map((name) => join('packages', name, 'test'))
    .filter((directory) => existsSync(join(root, directory)))
    .flatMap(testFiles),
];

describe('test layout', () => {
  it('finds the tests it checks', () => {
    expect(files).toContain('test/guarantee/guarantee.redis.test.ts');
    expect(files).toContain('packages/stores/test/conformance.postgres.test.ts');
  });

  it('names a file that mentions a store <subject>.<store>.test.ts', () => {
    const mentionsStore = new RegExp(`(^|[^a-z])(${stores.join('|')})([^a-z]|$)`);
    const wellNamed = new RegExp(`^[A-Za-z0-9-]+\\.(${stores.join('|')})\\.test(-d)?\\.ts$`);
    const misnamed = files.filter((file) => {
      const name = file.split('/').at(-1)!;
      return mentionsStore.test(name) && !wellNamed.test(name);
    });
    expect(misnamed).toEqual([]);
  });

  it('keeps no package-specific test folder in test/', () => {
    const folders = readdirSync(join(root, 'test'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      // An empty folder a move left behind is not in git.
      .filter((folder) => readdirSync(join(root, 'test', folder)).length > 0)
      // A lane (run.sh: an SDK on a newer Node, installed outside the workspace) is not a package's tests.
      .filter((folder) => !existsSync(join(root, 'test', folder, 'run.sh')));
    expect(folders.filter((folder) => packages.includes(folder))).toEqual([]);
  });
});
