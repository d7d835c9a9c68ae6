import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderSqliteSqlModule, sqliteGeneratedModulePath } from '../../scripts/generate-sqlite-sql.js';
import { migrations, statements } from './generated-sql.js';
import { quoteIdentifier } from './sqlite-store.js';

describe('generated SQLite SQL module', () => {
  it('is up to date with src/sqlite/sql/*.sql (run the generator when this fails)', () => {
    const committed = readFileSync(sqliteGeneratedModulePath, 'utf8');
    expect(
      committed === renderSqliteSqlModule(),
      'run: npx tsx packages/stores/scripts/generate-sqlite-sql.ts',
    ).toBe(true);
  });

  it('numbers migrations 1, 2, ... and uses only known placeholders', () => {
    expect(migrations.map((migration) => migration.version)).toEqual(migrations.map((_, index) => index + 1));
    const known = new Set([
      'table',
      'migrations_table',
      'expires_index',
      // [#20 listing]
      'resolutions_table',
      'list_tenant_index',
      'list_all_index',
      'resolutions_index',
    ]);
    for (const text of [...Object.values(statements), ...migrations.map((migration) => migration.text)]) {
      for (const [, name] of text.matchAll(/\{\{([a-z_]+)\}\}/g))
        expect(known.has(name as string), name).toBe(true);
    }
  });

  it('quotes identifiers by doubling inner double quotes', () => {
    expect(quoteIdentifier('plain')).toBe('"plain"');
    expect(quoteIdentifier('a"b; DROP TABLE x; --')).toBe('"a""b; DROP TABLE x; --"');
  });
});
