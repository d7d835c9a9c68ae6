// The stores' role map: one file name per role, the same in every store folder (a store may lack
// a role). Each folder's README.md table names exactly its files; this test keeps the folders,
// the READMEs and the map in step.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** Role → the one file (or folder, ending in `/`) that plays it; `<name>` is the store's name. */
export const ROLES = {
  store: '<name>-store.ts',
  index: 'index.ts',
  options: 'options.ts',
  errors: 'errors.ts',
  backend: 'backend.ts',
  names: 'names.ts',
  'record codec': 'record-codec.ts',
  claim: 'claim.ts',
  approvals: 'approvals.ts',
  'holder writes': 'holder-writes.ts',
  'operator writes': 'operator-writes.ts',
  'operator reads': 'operator-reads.ts',
  'settle wait': 'settle-wait.ts',
  'settle signal': 'settle-signal.ts',
  'operation deadline': 'operation-deadline.ts',
  schema: 'ensure-schema.ts',
  'statement loader': 'statements.ts',
  statements: 'statements/',
  migrations: 'migrations/',
  // Roles only one store has.
  'conditional writes': 'conditional-writes.ts',
  'migration steps': 'migration-steps.ts',
  'auto cleanup': 'auto-cleanup.ts',
  'pool checkout': 'pg-checkout.ts',
  'pool kinds': 'pg-connections.ts',
  'eviction policy': 'eviction-policy.ts',
  'script helpers': 'lua-includes.ts',
  'script commands': 'script-commands.ts',
  'record unpack': 'record-unpack.ts',
  'native claim': 'native-claim.ts',
  'native index': 'native-index.ts',
  'sweep draw': 'sweep-draw.ts',
} as const;

const root = new URL('../../../', import.meta.url);
const STORES = {
  memory: 'packages/core/src/memory/',
  redis: 'packages/stores/src/redis/',
  postgres: 'packages/stores/src/postgres/',
  sqlite: 'packages/stores/src/sqlite/',
  dynamodb: 'packages/stores/src/dynamodb/',
} as const;

const README_HEADER = '| role | file | what it does in this store |';
const migrationFile = /^\d{4}_[a-z0-9_]+\.sql$/;

/** The role map's names for one store. */
function roleFiles(store: string): Set<string> {
  return new Set(Object.values(ROLES).map((file) => file.replace('<name>', store)));
}

/** The folder's entries, minus tests and its README; folders end in `/`. */
export function layoutOf(folder: URL): string[] {
  return readdirSync(folder)
    .filter((entry) => !entry.endsWith('.test.ts') && entry !== 'README.md')
    .map((entry) => (statSync(new URL(entry, folder)).isDirectory() ? `${entry}/` : entry))
    .sort();
}

/** The README table's rows as (role, file), the file without its backquotes. */
export function readmeRows(text: string): { role: string; file: string }[] {
  const lines = text.split('\n');
  const start = lines.indexOf(README_HEADER);
  if (start < 0) return [];
  const rows: { role: string; file: string }[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const [role, file] = line
      .split('|')
      .slice(1, 3)
      .map((cell) => cell.trim());
    rows.push({ role: role ?? '', file: (file ?? '').replace(/`/g, '') });
  }
  return rows;
}

/** What is wrong with one store folder's layout (empty when it follows the map). */
export function layoutProblems(store: string, entries: readonly string[], readme: string): string[] {
  const problems: string[] = [];
  const allowed = roleFiles(store);
  for (const entry of entries) {
    if (!allowed.has(entry)) problems.push(`${entry}: no role of the map has this name`);
  }
  const rows = readmeRows(readme);
  if (rows.length === 0) problems.push(`README.md: no table headed ${README_HEADER}`);
  const byFile = new Map(Object.entries(ROLES).map(([role, file]) => [file.replace('<name>', store), role]));
  for (const { role, file } of rows) {
    if (byFile.get(file) !== role)
      problems.push(`README.md: ${file} is not the map's file of role "${role}"`);
  }
  const listed = rows.map((row) => row.file).sort();
  if (listed.join() !== entries.join()) problems.push('README.md: the table does not name exactly the files');
  return problems;
}

describe('every store folder follows the role map', () => {
  for (const [store, path] of Object.entries(STORES)) {
    const folder = new URL(path, root);

    it(`${store}: every file plays a role of the map, and README.md says which`, () => {
      const readme = readFileSync(new URL('README.md', folder), 'utf8');
      expect(layoutProblems(store, layoutOf(folder), readme)).toEqual([]);
    });

    it(`${store}: migrations only in migrations/, statements not in it`, () => {
      const entries = layoutOf(folder);
      if (entries.includes('migrations/')) {
        for (const file of readdirSync(new URL('migrations/', folder))) expect(file).toMatch(migrationFile);
      }
      if (entries.includes('statements/')) {
        for (const file of readdirSync(new URL('statements/', folder), { recursive: true }))
          expect(String(file)).not.toMatch(/(^|\/)\d{4}_/);
      }
    });
  }

  it('every README table has the same header and one row per file', () => {
    for (const path of Object.values(STORES)) {
      const readme = readFileSync(new URL(`${path}README.md`, root), 'utf8');
      expect(readme).toContain(`${README_HEADER}\n|---|---|---|\n`);
    }
  });

  it('refuses a file renamed off the map, and a README that misses it', () => {
    const readme = `${README_HEADER}\n|---|---|---|\n| store | \`redis-store.ts\` | the class |\n| options | \`options.ts\` | x |\n`;
    expect(layoutProblems('redis', ['options.ts', 'redis-store.ts'], readme)).toEqual([]);
    expect(layoutProblems('redis', ['redis-options.ts', 'redis-store.ts'], readme)).toEqual([
      'redis-options.ts: no role of the map has this name',
      'README.md: the table does not name exactly the files',
    ]);
  });
});
