// scripts/snippets.ts, the lint step that keeps the docs' code blocks true, run on a small tree
// of its own: a block that drifted from its source, an unmarked one, a command or a link that
// is not there must each fail with the file, the line and the reason.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { checkDocs, fencedBlocks, markdownFiles, region } from '../../scripts/snippets.js';

const script = fileURLToPath(new URL('../../scripts/snippets.ts', import.meta.url));
const trees: string[] = [];
afterEach(() => {
  for (const tree of trees.splice(0)) rmSync(tree, { recursive: true, force: true });
});

const source = [
  "import { strict } from 'node:assert';",
  '',
  '// #region greet',
  "export const greeting = 'hello';",
  'strict.equal(greeting.length, 5);',
  '// #endregion greet',
  '',
].join('\n');

const synced = [
  '# A project',
  '',
  '```ts source="examples/greet.ts#greet"',
  "export const greeting = 'hello';",
  'strict.equal(greeting.length, 5);',
  '```',
  '',
].join('\n');

/** A repository in a temporary folder: `files` (path → text) over a package.json and tsconfig. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'toolfence-snippets-'));
  trees.push(root);
  const all: Record<string, string> = {
    'package.json': JSON.stringify({ scripts: { demo: 'tsx demo.ts', test: 'vitest run' } }),
    'tsconfig.json': JSON.stringify({ include: ['examples'] }),
    'examples/greet.ts': source,
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

function check(root: string, options: { write?: boolean } = {}) {
  return checkDocs(root, markdownFiles(root), options).problems.map(
    (problem) => `${problem.file}:${problem.line}: ${problem.message}`,
  );
}

describe('scripts/snippets.ts', () => {
  it('passes a block that is its source region, indented under a list item too', () => {
    // The source is named relative to the markdown file.
    const indented = synced
      .replace(/^(```|export|strict)/gm, '  $1')
      .replace('source="examples', 'source="../examples');
    const root = tree({ 'README.md': synced, 'docs/list.md': `- an item:\n\n${indented}` });
    expect(check(root)).toEqual([]);
  });

  it('fails a drifted block with its file, line and source, as --check run by lint', () => {
    const root = tree({ 'README.md': synced.replace("'hello'", "'hullo'") });
    expect(check(root)).toEqual([
      'README.md:3: drifted from examples/greet.ts#greet (npx tsx scripts/snippets.ts --write)',
    ]);
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    const run = spawnSync(process.execPath, ['--import', tsx, script, '--check', '--root', root], {
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('README.md:3: drifted from examples/greet.ts#greet');
    expect(run.stderr).toContain('snippets: 1 problem(s) in 1 markdown files');
  });

  it('--write copies the region into the block, and then it passes', () => {
    const root = tree({ 'README.md': synced.replace("'hello'", "'hullo'") });
    expect(checkDocs(root, ['README.md'], { write: true }).written).toEqual(['README.md']);
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toBe(synced);
    expect(check(root)).toEqual([]);
  });

  it('fails code that is not synced, or synced from a file the typecheck does not compile', () => {
    const root = tree({
      'README.md':
        '```ts\nconst x = 1;\n```\n\n```ts source="scripts/x.ts#a"\n```\n\n```ts source="examples/greet.ts#none"\n```\n',
      'scripts/x.ts': '// #region a\nconst x = 1;\n// #endregion a\n',
    });
    expect(check(root)).toEqual([
      'README.md:1: a ts block without source="file#region": put it in a compiled file',
      'README.md:5: source scripts/x.ts#a: npm run typecheck does not compile it',
      'README.md:5: drifted from scripts/x.ts#a (npx tsx scripts/snippets.ts --write)',
      'README.md:8: source examples/greet.ts#none: no region "none" (// #region none … // #endregion none)',
    ]);
  });

  it('fails commands, JSON and blocks no check knows', () => {
    const root = tree({
      'docs/run.md': [
        '```sh',
        'npm ci && npm run demo   # npm run nothing: a comment',
        'npm test',
        'npm run dmeo',
        'npx tsx examples/greet.ts && npx tsx examples/gone.ts',
        '```',
        '```json',
        '{ "a": 1, }',
        '```',
        '```text',
        'output no test compares',
        '```',
        '```',
        'no kind',
        '```',
      ].join('\n'),
    });
    expect(check(root)).toEqual([
      'docs/run.md:1: `npm run dmeo` is not a script of package.json',
      'docs/run.md:1: examples/gone.ts does not exist',
      'docs/run.md:7: a json block that does not parse',
      'docs/run.md:10: a text block no test compares with real output (scripts/snippets.ts, TEXT_CHECKED_BY)',
      'docs/run.md:13: a block without a kind (```ts, ```sh, …)',
    ]);
  });

  it('checks a digest block: each "→ hex" is the SHA-256 (or HMAC) of the line above', () => {
    const sha = '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824'; // SHA-256 of "hello"
    const root = tree({
      'docs/key.md': `\`\`\`digest\nhello\n→ ${sha}\n\`\`\`\n\`\`\`digest hmac-key="k"\nhello\n→ ${sha}\n\`\`\`\n`,
    });
    expect(check(root)).toEqual([
      'docs/key.md:5: digest of line 1 is 406e4b43f87095aa86ca6299d25e875921fefa180f02043bb29bec5681c0c2d0, not ' +
        sha,
    ]);
  });

  it('fails a package README link that leaves the package, and a link to nothing', () => {
    const root = tree({
      'docs/guide.md': '# Guide\n',
      'packages/core/docs/inside.md': '# Inside\n',
      'packages/core/README.md': [
        '[inside](docs/inside.md), [absolute](https://example.com/docs/guide.md), [here](#top)',
        '[the guide](../../docs/guide.md)',
        '[missing](docs/missing.md)',
      ].join('\n'),
    });
    expect(check(root)).toEqual([
      'packages/core/README.md:2: ../../docs/guide.md leaves the package: its registry page cannot follow it (use an absolute URL)',
      'packages/core/README.md:3: docs/missing.md: no such file',
    ]);
  });

  it('reads regions and fences as the docs write them', () => {
    expect(region(source, 'greet')).toBe(
      "export const greeting = 'hello';\nstrict.equal(greeting.length, 5);",
    );
    expect(fencedBlocks(synced)).toMatchObject([
      { lang: 'ts', line: 3, end: 6, attributes: { source: 'examples/greet.ts#greet' } },
    ]);
  });
});
