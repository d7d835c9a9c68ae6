/**
 * Compiles the SQLiteStore's SQL files (`src/sqlite/sql/*.sql`) into one TypeScript module,
 * `src/sqlite/generated-sql.ts`, so the store reads nothing from disk at run time.
 *
 *   npx tsx packages/stores/scripts/generate-sqlite-sql.ts
 */
import { pathToFileURL } from 'node:url';
import { renderSqlModule, type SqlModuleSpec, sqlPaths, writeSqlModule } from './sql-module.js';

const spec: SqlModuleSpec = {
  store: 'sqlite',
  script: 'generate-sqlite-sql.ts',
  migrationType: 'SQLiteMigration',
};
const paths = sqlPaths('sqlite');
export const sqliteSqlDirectory = paths.sqlDirectory;
export const sqliteGeneratedModulePath = paths.generatedModulePath;

/** Renders the module text from the SQL files in `sqlDirectory`. */
export function renderSqliteSqlModule(sqlDirectory: string = sqliteSqlDirectory): string {
  return renderSqlModule(spec, sqlDirectory);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) writeSqlModule(spec);
