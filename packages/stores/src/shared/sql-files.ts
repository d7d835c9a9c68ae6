/**
 * A SQL store's statements and migrations, read from the package when the store's module loads
 * (nothing is generated or copied): the migrations in `src/<store>/migrations/NNNN_name.sql`
 * (append-only, applied in order, numbered 1, 2, ... without gaps), apart from the statements the
 * code runs, `src/<store>/statements/*.sql`. `{{placeholders}}` in both are replaced with quoted identifiers by the store.
 * A line `-- @include <name>` in a statement is replaced, at load time, by `statements/fragments/<name>.sql`
 * (its leading `--` comment lines dropped): the parts several statements share are written once.
 *
 * The files ship in the package's `src/` (package.json `files`). This module sits two folders
 * below the package root both as `src/shared/sql-files.ts` (the `@toolfence/source` condition) and
 * as `dist/shared/sql-files.js` (the build), so one relative path finds them from either.
 */
import { readdirSync, readFileSync } from 'node:fs';

const sourceRoot = new URL('../../src/', import.meta.url);

/** One append-only migration. */
export interface SqlMigration {
  readonly version: number;
  /** The file name without `.sql`, e.g. `0001_init`. */
  readonly name: string;
  readonly text: string;
}

/** What {@link loadSqlFiles} read. */
export interface SqlFiles<Name extends string> {
  readonly migrations: readonly SqlMigration[];
  readonly statements: Readonly<Record<Name, string>>;
  /** Every `.sql` file of `statements/` (a test checks each is a statement). */
  readonly statementFiles: readonly string[];
}

const migrationFileName = /^(\d{4})_([a-z0-9_]+)\.sql$/;
const includeLine = /^-- @include ([a-z0-9-]+)$/gm;

/** `text` with each `-- @include <name>` line replaced by the fragment (no nesting). */
function expandIncludes(text: string, directory: URL): string {
  return text.replace(includeLine, (_line, name: string) => {
    const fragment = readFileSync(new URL(`fragments/${name}.sql`, directory), 'utf8');
    const body = fragment.replace(/^(--.*\n)+/, '').trimEnd();
    if (/^-- @include /m.test(body))
      throw new Error(`statements/fragments/${name}.sql: a fragment cannot include another`);
    return body;
  });
}

function readMigrations(directory: URL, files: readonly string[]): SqlMigration[] {
  const migrations: SqlMigration[] = [];
  for (const file of files) {
    const match = migrationFileName.exec(file);
    if (!match) throw new Error(`migrations/${file}: a migration is named NNNN_name.sql`);
    const version = Number(match[1]);
    if (version !== migrations.length + 1) {
      throw new Error(
        `Migration ${file} should be numbered ${String(migrations.length + 1).padStart(4, '0')}`,
      );
    }
    const text = readFileSync(new URL(file, directory), 'utf8');
    migrations.push({ version, name: file.slice(0, -'.sql'.length), text });
  }
  return migrations;
}

/**
 * Reads `src/<store>/migrations/` (every file a migration) and the statements of
 * `src/<store>/statements/` named in `statementFiles` (property → file name without `.sql`).
 */
export function loadSqlFiles<Name extends string>(
  store: string,
  statementFiles: Readonly<Record<Name, string>>,
): SqlFiles<Name> {
  const directory = new URL(`${store}/statements/`, sourceRoot);
  const migrationsDirectory = new URL(`${store}/migrations/`, sourceRoot);
  const sqlFilesOf = (folder: URL) =>
    readdirSync(folder)
      .filter((file) => file.endsWith('.sql'))
      .sort();
  const files = sqlFilesOf(directory);
  const migrationFiles = sqlFilesOf(migrationsDirectory);
  const statements = {} as Record<Name, string>;
  for (const [name, file] of Object.entries(statementFiles) as [Name, string][]) {
    statements[name] = expandIncludes(readFileSync(new URL(`${file}.sql`, directory), 'utf8'), directory);
  }
  return {
    migrations: readMigrations(migrationsDirectory, migrationFiles),
    statements,
    statementFiles: files,
  };
}
