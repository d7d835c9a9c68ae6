import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { quoteIdentifier } from './names.js';
import { migrations, statementFiles, statements } from './statements.js';

describe('the SQLite SQL files, loaded from migrations/ and statements/', () => {
  it('loads every file: each of migrations/ a migration, each of statements/ a named statement', () => {
    const sqlFilesIn = (folder: string) =>
      readdirSync(new URL(folder, import.meta.url)).filter((file) => file.endsWith('.sql'));
    expect(sqlFilesIn('./migrations/').length).toBe(migrations.length);
    expect(sqlFilesIn('./statements/').length).toBe(statementFiles.length);
    expect(Object.keys(statements).length).toBe(statementFiles.length);
    expect(migrations[0]?.name).toBe('0001_init');
    expect(statements.selectRecord).toContain('{{table}}');
  });

  it('puts the shared fragments in place of each -- @include line, without their comments', () => {
    for (const text of Object.values(statements)) expect(text).not.toMatch(/^-- @include/m);
    for (const text of [statements.listNewest, statements.listOldest]) {
      expect(text).toContain('FROM {{table}}\nWHERE (@tenant IS NULL OR tenant = @tenant)\n');
      expect(text).toContain(
        'AND (@olderThanMs IS NULL OR updated_at_ms <= @now - @olderThanMs)\n  AND (@cursorUpdatedAtMs',
      );
      expect(text).not.toContain('The start of list-newest.sql');
    }
  });

  it('numbers migrations 1, 2, ... and uses only known placeholders', () => {
    expect(migrations.map((migration) => migration.version)).toEqual(migrations.map((_, index) => index + 1));
    const known = new Set([
      'table',
      'migrations_table',
      'expires_index',
      'resolutions_table',
      'list_tenant_index',
      'list_all_index',
      'resolutions_index',
      'resolutions_expires_index',
      'resolutions_table_next',
      'resolutions_table_name',
      'sweep_index',
      'table_next',
      'table_name',
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
