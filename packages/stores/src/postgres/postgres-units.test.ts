import { readdirSync } from 'node:fs';
import { StoreConfigurationError, StoreInputError, StoreUnavailableError } from '@toolfence/core/store';
import { describe, expect, it } from 'vitest';
import { classifyFailure, isUnavailableError, toStoreError } from './errors.js';
import { postgresNames, quoteIdentifier, renderSql, validateIdentifier } from './names.js';
import { migrations, statementFiles, statements } from './statements.js';

describe('the SQL files, loaded from migrations/ and statements/', () => {
  it('loads every file: each of migrations/ a migration, each of statements/ a named statement', () => {
    const sqlFilesIn = (folder: string) =>
      readdirSync(new URL(folder, import.meta.url)).filter((file) => file.endsWith('.sql'));
    expect(sqlFilesIn('./migrations/').length).toBe(migrations.length);
    expect(sqlFilesIn('./statements/').length).toBe(statementFiles.length);
    expect(Object.keys(statements).length).toBe(statementFiles.length);
    expect(statements.claim).toMatch(/^-- /);
    expect(migrations[2]?.name).toBe('0003_outcome_bytes');
  });

  it('puts the shared fragments in place of each -- @include line, without their comments', () => {
    for (const text of Object.values(statements)) expect(text).not.toMatch(/^-- @include/m);
    for (const name of [
      'completeLocked',
      'markIndeterminateLocked',
      'releaseLocked',
      'resolveCompleted',
      'resolveReleased',
    ] as const) {
      const text = statements[name];
      expect(text).toContain('WITH current AS (\n  SELECT *\n  FROM {{table}}\n');
      expect(text).toContain(', change AS (');
      expect(text).toMatch(/EXISTS \(SELECT 1 FROM change\) AS changed,[^;]*FROM current;\n$/);
      expect(text).not.toContain('Ends a lock-then-change statement');
    }
    for (const name of ['complete', 'markIndeterminate', 'release'] as const) {
      const text = statements[name];
      expect(text).not.toContain('FOR UPDATE');
      expect(text).toContain('), seen AS (\n  SELECT *, (');
      expect(text).toMatch(
        /seen\.matched AND NOT EXISTS \(SELECT 1 FROM change\) AS ambiguous,[^;]*FROM seen;\n$/,
      );
      expect(text).not.toContain('Ends a holder-matching statement');
    }
    expect(statements.renew).not.toContain('FOR UPDATE');
    expect(statements.renewLocked).toContain('FOR UPDATE');
  });

  it('numbers migrations 1, 2, ... without gaps', () => {
    expect(migrations.map((migration) => migration.version)).toEqual(migrations.map((_, index) => index + 1));
    expect(migrations[0]?.name).toBe('0001_init');
  });

  it('renders every template with no placeholder left', () => {
    const names = postgresNames('toolfence', 'idempotency_records');
    // {{batch_limit}} is a batched online step's own (ensure-schema.ts fills it in per run).
    for (const text of [...Object.values(statements), ...migrations.map((migration) => migration.text)]) {
      expect(renderSql(text.replaceAll('{{batch_limit}}', '5000'), names.placeholders)).not.toMatch(
        /\{\{|\}\}/,
      );
    }
  });
});

describe('identifiers', () => {
  it('quotes by doubling inner double quotes', () => {
    expect(quoteIdentifier('plain')).toBe('"plain"');
    expect(quoteIdentifier('a"b; DROP TABLE x; --')).toBe('"a""b; DROP TABLE x; --"');
  });

  it('accepts odd names and refuses unusable ones', () => {
    expect(validateIdentifier('table', 'Tool Fence "records"')).toBe('Tool Fence "records"');
    expect(validateIdentifier('schema', 'é东京')).toBe('é东京');
    expect(() => validateIdentifier('table', '')).toThrow(TypeError);
    expect(() => validateIdentifier('table', 'a\u0000b')).toThrow(/NUL/);
    expect(() => validateIdentifier('table', 'x'.repeat(49))).toThrow(/48 bytes/);
    expect(() => validateIdentifier('table', 'é'.repeat(25))).toThrow(/48 bytes/);
    expect(() => validateIdentifier('schema', 'bad\uD800')).toThrow(/well-formed/);
    expect(() => validateIdentifier('schema', 42)).toThrow(TypeError);
  });

  it('derives a short channel that differs per schema and table', () => {
    const a = postgresNames('s', 't').channel;
    expect(a).toMatch(/^toolfence_[0-9a-f]{20}$/);
    expect(postgresNames('s', 'u').channel).not.toBe(a);
    expect(postgresNames('s.t', '').channel).not.toBe(postgresNames('s', 't.').channel);
  });

  it('refuses an unknown placeholder', () => {
    expect(() => renderSql('SELECT {{nope}}', {})).toThrow(/unknown SQL placeholder/);
  });
});

describe('error classification', () => {
  const serverError = (code: string) =>
    Object.assign(new Error(`server says ${code}`), { code, severity: 'ERROR' });
  const site = { store: 'PostgresStore at 127.0.0.1:5432/test', table: '"s"."t"' };

  it('treats connection, shutdown, timeout and resource errors as unavailable', () => {
    for (const code of ['08006', '57P01', '57014', '53300', '40001', '40P01', '55P03', 'XX000', '58030']) {
      expect(classifyFailure(serverError(code)), code).toBe('unavailable');
    }
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND']) {
      expect(isUnavailableError(Object.assign(new Error(code), { code })), code).toBe(true);
    }
    expect(isUnavailableError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isUnavailableError(new Error('Query read timeout'))).toBe(true);
    expect(
      isUnavailableError(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })])),
    ).toBe(true);
  });

  it('reports input-class SQLSTATEs (22, 54) as StoreInputError', () => {
    for (const code of ['22021', '22P05', '22003', '22001', '54000']) {
      const mapped = toStoreError('claim', serverError(code), site);
      expect(StoreInputError.isInstance(mapped), code).toBe(true);
      expect((mapped as Error).message).toContain(site.store);
      expect((mapped as Error).cause).toBeDefined();
    }
  });

  it('reports a missing or older schema, a permission, a read-only node and other refusals as StoreConfigurationError', () => {
    const missing = toStoreError('get', serverError('42P01'), site) as Error;
    expect(StoreConfigurationError.isInstance(missing)).toBe(true);
    expect(missing.message).toMatch(/"s"\."t" does not exist; run `await store\.ensureSchema\(\)`/);
    expect(missing.message).toContain('127.0.0.1:5432/test');
    expect((toStoreError('get', serverError('3F000'), site) as Error).message).toMatch(/ensureSchema/);
    expect((toStoreError('get', serverError('42703'), site) as Error).message).toMatch(
      /older than this store/,
    );
    expect((toStoreError('claim', serverError('42501'), site) as Error).message).toMatch(/privilege/);
    expect((toStoreError('claim', serverError('25006'), site) as Error).message).toMatch(/read-only/);
    for (const code of ['42601', '23505', '28P01', '3D000']) {
      expect(StoreConfigurationError.isInstance(toStoreError('claim', serverError(code), site)), code).toBe(
        true,
      );
    }
  });

  it("rethrows what is not PostgreSQL's unchanged, and wraps unavailability with the cause and the address", () => {
    const bug = new TypeError('bug');
    expect(toStoreError('claim', bug, site)).toBe(bug);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const wrapped = toStoreError('claim', refused, site);
    expect(StoreUnavailableError.isInstance(wrapped)).toBe(true);
    expect((wrapped as StoreUnavailableError).operation).toBe('claim');
    expect((wrapped as Error).message).toContain('PostgresStore at 127.0.0.1:5432/test');
    expect((wrapped as Error).cause).toBe(refused);
  });

  // Issue 27, item 6: a statement the server refused, or one never sent, changed nothing; one
  // in flight when the connection ended or timed out may have committed.
  it('says whether a failed statement may have been applied', () => {
    const outcome = (error: unknown) =>
      (toStoreError('resolve', error, site) as StoreUnavailableError).outcome;
    for (const code of ['57014', '57P01', '40001', '55P03', '53300'])
      expect(outcome(serverError(code)), code).toBe('not-applied');
    for (const code of ['ECONNREFUSED', 'ENOTFOUND'])
      expect(outcome(Object.assign(new Error(code), { code })), code).toBe('not-applied');
    expect(outcome(new Error('timeout exceeded when trying to connect'))).toBe('not-applied');
    expect(outcome(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]))).toBe(
      'not-applied',
    );
    for (const code of ['ECONNRESET', 'EPIPE', 'ETIMEDOUT'])
      expect(outcome(Object.assign(new Error(code), { code })), code).toBe('unknown');
    expect(outcome(new Error('Connection terminated unexpectedly'))).toBe('unknown');
    expect(outcome(new Error('Query read timeout'))).toBe('unknown');
  });
});
