/**
 * Compiles the PostgresStore's SQL files (`src/postgres/sql/*.sql`) into one TypeScript module,
 * `src/postgres/generated-sql.ts`, so the store reads nothing from disk at run time.
 *
 *   npx tsx packages/stores/scripts/generate-postgres-sql.ts
 */
import { pathToFileURL } from 'node:url';
import { renderSqlModule, type SqlModuleSpec, sqlPaths, writeSqlModule } from './sql-module.js';

const spec: SqlModuleSpec = {
  store: 'postgres',
  script: 'generate-postgres-sql.ts',
  migrationType: 'PostgresMigration',
};
const paths = sqlPaths('postgres');
export const postgresSqlDirectory = paths.sqlDirectory;
export const postgresGeneratedModulePath = paths.generatedModulePath;

/** Renders the module text from the SQL files in `sqlDirectory`. */
export function renderPostgresSqlModule(sqlDirectory: string = postgresSqlDirectory): string {
  return renderSqlModule(spec, sqlDirectory);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) writeSqlModule(spec);
