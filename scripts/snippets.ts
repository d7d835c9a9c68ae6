// Keeps the docs' code blocks true (CONTRIBUTING.md, "Code in the docs"). Every fenced block of
// the markdown below is either a copy of a region of a compiled file (```ts source="path#region")
// or a kind this script can check (shell commands that name real scripts, files and CLI flags;
// JSON that parses; output a test compares). Package READMEs link only inside their package.
//
//   npx tsx scripts/snippets.ts --check   fails listing each drifted or unchecked block
//   npx tsx scripts/snippets.ts --write   copies every region into its block, then checks
//   (--root DIR checks another tree: the test's)
import { createHash, createHmac } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';

export interface Problem {
  /** The markdown file, relative to the root. */
  readonly file: string;
  /** 1-based line of the opening fence or of the link. */
  readonly line: number;
  readonly message: string;
}

export interface Block {
  /** The first word of the info string: ts, sh, json, … */
  readonly lang: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** The opening fence's indentation, which every body line carries too. */
  readonly indent: string;
  /** 1-based line numbers of the opening and closing fences. */
  readonly line: number;
  readonly end: number;
  /** The body with the block's indentation removed. */
  readonly body: string;
}

/** The README stays a front door. */
export const README_MAX_LINES = 160;

const TS_KINDS = new Set(['ts', 'typescript', 'tsx', 'js', 'javascript']);
const SHELL_KINDS = new Set(['sh', 'bash', 'shell']);
const MERMAID_START = /^(stateDiagram(-v2)?|flowchart|graph|sequenceDiagram|classDiagram|erDiagram)\b/;

/**
 * Where a ```text block may appear: the test that compares it with real output, and must read
 * that markdown file.
 */
export const TEXT_CHECKED_BY: Readonly<Record<string, string>> = {
  'docs/operations.md': 'packages/cli/test/operations-doc.test.ts',
  'docs/demo.md': 'test/demo/demo.test.ts',
};

/** A YAML block must parse as one YAML document (the `yaml` package, YAML 1.2). */
function yamlProblem(body: string): string | undefined {
  const document = parseDocument(body);
  return document.errors.length === 0
    ? undefined
    : `a yaml block that does not parse: ${document.errors[0]?.message}`;
}

/**
 * Blocks not yet brought under a check, each named by its file and the first line of its body.
 * They are listed, not failed; an entry that matches no failing block fails, so the list only
 * shrinks. Each needs a package the workspace does not install, or a parser it lacks.
 */
export const PENDING: readonly { readonly file: string; readonly first: string; readonly why: string }[] = [];

/** The markdown files whose blocks are checked, relative to `root`. */
export function markdownFiles(root: string): string[] {
  const found: string[] = [];
  const add = (path: string) => {
    if (existsSync(join(root, path))) found.push(path);
  };
  const walk = (dir: string) => {
    if (!existsSync(join(root, dir))) return;
    for (const entry of readdirSync(join(root, dir)).sort()) {
      const path = `${dir}/${entry}`;
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (entry.endsWith('.md')) found.push(path);
    }
  };
  add('README.md');
  add('CONTRIBUTING.md');
  walk('docs');
  const packages = existsSync(join(root, 'packages')) ? readdirSync(join(root, 'packages')).sort() : [];
  for (const name of packages) {
    add(`packages/${name}/README.md`);
    walk(`packages/${name}/docs`);
  }
  return found;
}

/** The fenced blocks of `markdown`, indented ones (in list items) included. */
export function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^( *)(`{3,})([^`]*)$/.exec(lines[index] as string);
    if (open === null) continue;
    const indent = open[1] ?? '';
    const ticks = open[2] ?? '```';
    const info = (open[3] ?? '').trim();
    const closing = lines.findIndex(
      (text, at) => at > index && text.trim().startsWith(ticks) && text.trim().replaceAll('`', '') === '',
    );
    if (closing === -1) break;
    const attributes: Record<string, string> = {};
    for (const match of info.matchAll(/([\w-]+)="([^"]*)"/g))
      attributes[match[1] as string] = match[2] as string;
    const body = lines
      .slice(index + 1, closing)
      .map((text) => (text.startsWith(indent) ? text.slice(indent.length) : text.trimStart()))
      .join('\n');
    blocks.push({
      lang: info.split(/\s+/)[0] ?? '',
      attributes,
      indent,
      line: index + 1,
      end: closing + 1,
      body,
    });
    index = closing;
  }
  return blocks;
}

/** The lines between `// #region name` and `// #endregion name`, dedented. */
export function region(source: string, name: string): string | undefined {
  const lines = source.split('\n');
  const start = lines.findIndex((text) => text.trim() === `// #region ${name}`);
  if (start === -1) return undefined;
  const end = lines.findIndex(
    (text, at) => at > start && (text.trim() === `// #endregion ${name}` || text.trim() === '// #endregion'),
  );
  if (end === -1) return undefined;
  const body = lines.slice(start + 1, end);
  while (body.length > 0 && (body[body.length - 1] as string).trim() === '') body.pop();
  while (body.length > 0 && (body[0] as string).trim() === '') body.shift();
  const margin = Math.min(
    ...body.filter((text) => text.trim() !== '').map((text) => text.length - text.trimStart().length),
  );
  return body.map((text) => (text.trim() === '' ? '' : text.slice(margin))).join('\n');
}

/**
 * The directories and files a type-check compiles: tsconfig.json's "include" (`npm run
 * typecheck`) and each lane's test/<lane>/tsconfig.json (a lane on a newer Node, run by its
 * run.sh in CI), relative to the repository.
 */
function compiledRoots(root: string): string[] {
  const read = (file: string): string[] => {
    // tsconfig files may hold // comments: drop whole comment lines before parsing.
    const text = readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => !line.trim().startsWith('//'))
      .join('\n');
    const config = JSON.parse(text) as { include?: string[] };
    const base = relative(root, dirname(file));
    return (config.include ?? []).map((entry) =>
      join(base, entry.replace(/\/\*.*$/, ''))
        .split(sep)
        .join('/'),
    );
  };
  const lanes = (existsSync(join(root, 'test')) ? readdirSync(join(root, 'test')) : [])
    .map((lane) => join(root, 'test', lane, 'tsconfig.json'))
    .filter((file) => existsSync(file));
  return [join(root, 'tsconfig.json'), ...lanes].flatMap(read).concat(LANE_COMPILED_FILES);
}

/** Files a lane compiles by copying them into its own project (not through a tsconfig here). */
const LANE_COMPILED_FILES = [
  'examples/durable/workflow-devkit.ts', // test/workflow-devkit/run.sh, as the project's workflows/checkout.ts
];

function isCompiled(root: string, file: string): boolean {
  const path = relative(root, file).split(sep).join('/');
  if (!/\.(ts|tsx|mts)$/.test(path) || path.endsWith('.d.ts')) return false;
  return compiledRoots(root).some((entry) => {
    if (entry.includes('*')) {
      const pattern = new RegExp(`^${entry.replaceAll('.', '\\.').replaceAll('*', '[^/]+')}(/|$)`);
      return pattern.test(path);
    }
    return path === entry || path.startsWith(`${entry}/`);
  });
}

/** Subcommands of the `toolfence` CLI and the flags each takes (global flags under ''). */
export function cliFlags(root: string): Map<string, Set<string>> {
  const main = join(root, 'packages/cli/src/main.ts');
  const flags = new Map<string, Set<string>>();
  if (!existsSync(main)) return flags;
  const parts = readFileSync(main, 'utf8').split(/\.command\('/);
  parts.forEach((part, index) => {
    const name = index === 0 ? '' : (/^([\w-]+)/.exec(part)?.[1] ?? '');
    const own = new Set<string>(['--help', '-h']);
    for (const match of part.matchAll(/(?:option|Option)\(\s*'(--[\w-]+)/g)) own.add(match[1] as string);
    flags.set(name, own);
  });
  return flags;
}

/** Splits one shell line into commands, and each into words (quotes kept together, then removed). */
function shellCommands(line: string): string[][] {
  const words: string[][] = [[]];
  const pattern =
    /'[^']*'|"(?:\\.|[^"\\])*"|&&|\|\||[;|()&]|[^\s'";|()&]+(?:'[^']*'|"[^"]*"|[^\s'";|()&]+)*/g;
  for (const match of line.matchAll(pattern)) {
    const word = match[0];
    if (['&&', '||', ';', '|', '(', ')', '&'].includes(word)) words.push([]);
    else (words[words.length - 1] as string[]).push(word.replace(/^['"]|['"]$/g, ''));
  }
  return words.filter((command) => command.length > 0);
}

/** The comment of a shell line removed (a `#` that starts a word, outside quotes). */
function withoutComment(line: string): string {
  let quote: string | undefined;
  for (let index = 0; index < line.length; index++) {
    const char = line[index] as string;
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === '#' && (index === 0 || /\s/.test(line[index - 1] as string)))
      return line.slice(0, index);
  }
  return line;
}

interface Repository {
  readonly root: string;
  readonly scripts: ReadonlySet<string>;
  readonly packages: ReadonlySet<string>;
  readonly cli: Map<string, Set<string>>;
}

function repository(root: string): Repository {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
    workspaces?: string[];
  };
  const packages = new Set<string>();
  // The workspaces, and packages outside the root install (a lane's, e.g. packages/mastra).
  const folders = existsSync(join(root, 'packages'))
    ? readdirSync(join(root, 'packages')).map((name) => `packages/${name}`)
    : [];
  for (const workspace of new Set([...(manifest.workspaces ?? []), ...folders])) {
    const file = join(root, workspace, 'package.json');
    if (existsSync(file)) packages.add((JSON.parse(readFileSync(file, 'utf8')) as { name: string }).name);
  }
  return { root, scripts: new Set(Object.keys(manifest.scripts ?? {})), packages, cli: cliFlags(root) };
}

let testFileList: string[] | undefined;
/** Every *.test.ts path of the repository, relative to its root (node_modules and dist left out). */
function testFiles(root: string): string[] {
  if (testFileList !== undefined) return testFileList;
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.test.ts')) found.push(path);
    }
  };
  walk('');
  testFileList = found;
  return found;
}

/** What is wrong with one shell command: a script, a file, a subcommand or a flag that is not there. */
function shellCommandProblems(words: string[], repo: Repository): string[] {
  const problems: string[] = [];
  const args = words.filter((word) => !/^[A-Z_]+=/.test(word));
  const [program, ...rest] = args;
  const fileExists = (path: string) => existsSync(join(repo.root, path));
  const toolfence = (argv: string[]) => {
    const [sub, ...options] = argv.filter((word) => word !== '--');
    const globals = repo.cli.get('') ?? new Set<string>();
    if (sub === undefined || sub.startsWith('-')) return;
    const own = repo.cli.get(sub);
    if (own === undefined) {
      problems.push(`\`toolfence ${sub}\` is not a subcommand of packages/cli/src/main.ts`);
      return;
    }
    for (const option of options) {
      const flag = option.split('=')[0] as string;
      if (flag.startsWith('--') && !own.has(flag) && !globals.has(flag)) {
        problems.push(`\`toolfence ${sub}\` has no flag ${flag}`);
      }
    }
  };
  if (program === 'npm') {
    const [verb, ...after] = rest;
    if (verb === 'run') {
      const name = after.find((word) => !word.startsWith('-'));
      if (name === undefined || !repo.scripts.has(name))
        problems.push(`\`npm run ${name}\` is not a script of package.json`);
      else if (name === 'toolfence') toolfence(after.slice(after.indexOf('--') + 1));
    } else if (verb === 'install' || verb === 'i') {
      for (const name of after) {
        if (name.startsWith('@toolfence/') && !repo.packages.has(name.replace(/@[^/@]*$/, ''))) {
          problems.push(`${name} is not a package of this repository`);
        }
      }
    }
  } else if (program === 'npx' || program === 'tsx' || program === 'node') {
    const tool = program === 'npx' ? rest[0] : program;
    const argv = program === 'npx' ? rest.slice(1) : rest;
    if (tool === 'toolfence') toolfence(argv);
    else if (tool === 'tsx' || tool === 'node') {
      const file = argv.find((word) => !word.startsWith('-'));
      if (file !== undefined && /\.(ts|mts|js|mjs|cjs)$/.test(file) && !fileExists(file)) {
        problems.push(`${file} does not exist`);
      }
    } else if (tool === 'vitest') {
      // vitest takes path filters: a test file is run when its path contains the filter.
      for (const path of argv.filter((word) => !word.startsWith('-') && word !== 'run')) {
        const matches = testFiles(repo.root).some((file) => file.includes(path));
        if (!fileExists(path) && !matches) problems.push(`${path} (given to vitest) matches no file`);
      }
    }
  } else if (program === 'toolfence') toolfence(rest);
  else if (program === 'bash' && rest[0] !== undefined && !rest[0].startsWith('-') && !fileExists(rest[0])) {
    problems.push(`${rest[0]} does not exist`);
  }
  return problems;
}

function shellProblems(body: string, repo: Repository): string[] {
  return body
    .replace(/\\\n/g, ' ')
    .split('\n')
    .flatMap((line) =>
      shellCommands(withoutComment(line)).flatMap((words) => shellCommandProblems(words, repo)),
    );
}

function jsonProblem(body: string): string | undefined {
  for (const text of [body, `{${body}}`]) {
    try {
      JSON.parse(text);
      return undefined;
    } catch {}
  }
  return 'a json block that does not parse';
}

/**
 * A ```digest block: each `→ [label] <hex>` line is the SHA-256 (HMAC-SHA-256 under the UTF-8 of
 * the block's `hmac-key` attribute) of the UTF-8 of the line above it.
 */
function digestProblems(body: string, hmacKey: string | undefined): string[] {
  const problems: string[] = [];
  const lines = body.split('\n');
  let arrows = 0;
  lines.forEach((text, index) => {
    const arrow = /^→\s+(?:\w+\s+)?([0-9a-f]{64})\b/.exec(text);
    if (arrow === null) return;
    arrows++;
    const input = lines[index - 1] ?? '';
    const digest =
      hmacKey === undefined
        ? createHash('sha256').update(input, 'utf8').digest('hex')
        : createHmac('sha256', Buffer.from(hmacKey, 'utf8')).update(input, 'utf8').digest('hex');
    if (digest !== arrow[1]) problems.push(`digest of line ${index} is ${digest}, not ${arrow[1]}`);
  });
  if (arrows === 0) problems.push('a digest block without a "→ <64 hex>" line');
  return problems;
}

/** Relative links of `markdown`, with the line each is on. */
function links(markdown: string): { target: string; line: number }[] {
  const found: { target: string; line: number }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((text, index) => {
    if (/^ *`{3,}/.test(text)) fenced = !fenced;
    if (fenced) return;
    const prose = text.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      found.push({ target: match[1] as string, line: index + 1 });
    }
  });
  return found;
}

export interface Result {
  readonly problems: Problem[];
  /** Markdown files --write changed. */
  readonly written: string[];
  /** Problems of the blocks in PENDING: listed, not failed. */
  readonly pending: Problem[];
}

/** Checks (and with `write`, first syncs) the blocks and links of `files` (relative to `root`). */
export function checkDocs(root: string, files: readonly string[], options: { write?: boolean } = {}): Result {
  const repo = repository(root);
  const problems: Problem[] = [];
  const pendingSeen: Problem[] = [];
  const written: string[] = [];
  for (const file of files) {
    const path = join(root, file);
    const original = readFileSync(path, 'utf8');
    let lines = original.split('\n');
    const firstLines = new Map(
      fencedBlocks(original).map((block) => [block.line, block.body.split('\n')[0]]),
    );
    const report = (line: number, message: string) => {
      const first = firstLines.get(line);
      const pending = PENDING.find((entry) => entry.file === file && entry.first === first);
      if (pending === undefined) problems.push({ file, line, message });
      else pendingSeen.push({ file, line, message: `pending (${pending.why}): ${message}` });
    };
    // Bottom up, so that a rewritten block does not move the ones still to come.
    for (const block of fencedBlocks(original).reverse()) {
      const { lang, line } = block;
      if (TS_KINDS.has(lang)) {
        const source = block.attributes.source;
        if (source === undefined) {
          report(line, `a ${lang} block without source="file#region": put it in a compiled file`);
          continue;
        }
        const [sourcePath = '', name] = source.split('#');
        const sourceFile = resolve(dirname(path), sourcePath);
        if (name === undefined || !existsSync(sourceFile)) {
          report(line, `source ${source}: no such file, or no #region`);
          continue;
        }
        if (!isCompiled(root, sourceFile))
          report(line, `source ${source}: npm run typecheck does not compile it`);
        const wanted = region(readFileSync(sourceFile, 'utf8'), name);
        if (wanted === undefined) {
          report(line, `source ${source}: no region "${name}" (// #region ${name} … // #endregion ${name})`);
          continue;
        }
        if (wanted === block.body) continue;
        if (options.write === true) {
          const body = wanted.split('\n').map((text) => (text === '' ? '' : block.indent + text));
          lines = [...lines.slice(0, block.line), ...body, ...lines.slice(block.end - 1)];
        } else report(line, `drifted from ${source} (npx tsx scripts/snippets.ts --write)`);
      } else if (SHELL_KINDS.has(lang)) {
        for (const message of shellProblems(block.body, repo)) report(line, message);
      } else if (lang === 'json') {
        const message = jsonProblem(block.body);
        if (message !== undefined) report(line, message);
      } else if (lang === 'yaml' || lang === 'yml') {
        const message = yamlProblem(block.body);
        if (message !== undefined) report(line, message);
      } else if (lang === 'text') {
        const test = TEXT_CHECKED_BY[file];
        if (test === undefined || !existsSync(join(root, test))) {
          report(
            line,
            'a text block no test compares with real output (scripts/snippets.ts, TEXT_CHECKED_BY)',
          );
        } else if (!readFileSync(join(root, test), 'utf8').includes(file)) {
          report(line, `${test} does not read ${file}`);
        }
      } else if (lang === 'digest') {
        for (const message of digestProblems(block.body, block.attributes['hmac-key'])) report(line, message);
      } else if (lang === 'mermaid') {
        if (!MERMAID_START.test(block.body.trimStart()))
          report(line, 'a mermaid block without a diagram type');
      } else {
        report(
          line,
          lang === '' ? 'a block without a kind (```ts, ```sh, …)' : `a ${lang} block: no check knows it`,
        );
      }
    }
    const text = lines.join('\n');
    if (text !== original) {
      writeFileSync(path, text);
      written.push(file);
    }
    const home = /^packages\/[^/]+\//.exec(file)?.[0];
    for (const { target, line } of links(text)) {
      if (/^[a-z][a-z+.-]*:/i.test(target) || target.startsWith('#')) continue;
      const [targetPath = ''] = target.split('#');
      const resolved = relative(root, resolve(dirname(path), decodeURI(targetPath)))
        .split(sep)
        .join('/');
      if (home !== undefined && file.endsWith('README.md') && !`${resolved}/`.startsWith(home)) {
        report(
          line,
          `${target} leaves the package: its registry page cannot follow it (use an absolute URL)`,
        );
      } else if (!existsSync(join(root, resolved))) report(line, `${target}: no such file`);
    }
    if (file === 'README.md' && text.split('\n').length > README_MAX_LINES + 1) {
      report(1, `README.md has ${text.split('\n').length - 1} lines; at most ${README_MAX_LINES}`);
    }
  }
  for (const entry of PENDING) {
    if (!files.includes(entry.file)) continue;
    if (!pendingSeen.some((seen) => seen.file === entry.file && seen.message.includes(entry.why))) {
      problems.push({
        file: entry.file,
        line: 1,
        message: `PENDING entry "${entry.first}" matches no failing block: remove it`,
      });
    }
  }
  const order = new Map(files.map((file, index) => [file, index]));
  problems.sort((a, b) => (order.get(a.file) ?? 0) - (order.get(b.file) ?? 0) || a.line - b.line);
  return { problems, written, pending: pendingSeen };
}

function main(argv: readonly string[]): number {
  const write = argv.includes('--write');
  if (!write && !argv.includes('--check')) {
    console.error('usage: tsx scripts/snippets.ts --check | --write');
    return 2;
  }
  const at = argv.indexOf('--root');
  const root = at === -1 ? fileURLToPath(new URL('../', import.meta.url)) : resolve(argv[at + 1] ?? '.');
  const files = markdownFiles(root);
  const { problems, written, pending } = checkDocs(root, files, { write });
  for (const file of written) console.log(`wrote ${file}`);
  for (const problem of pending) console.log(`${problem.file}:${problem.line}: ${problem.message}`);
  for (const problem of problems) console.error(`${problem.file}:${problem.line}: ${problem.message}`);
  if (problems.length > 0) {
    console.error(`snippets: ${problems.length} problem(s) in ${files.length} markdown files`);
    return 1;
  }
  console.log(`snippets: every block and link of ${files.length} markdown files checks out`);
  return 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
