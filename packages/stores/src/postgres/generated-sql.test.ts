import { readFileSync } from 'node:fs';
import { StoreUnavailableError } from '@toolfence/core';
import { describe, expect, it } from 'vitest';
import { postgresGeneratedModulePath, renderPostgresSqlModule } from '../../scripts/generate-postgres-sql.js';
import { migrations, statements } from './generated-sql.js';
import { postgresNames, quoteIdentifier, renderSql, validateIdentifier } from './identifiers.js';
import { isUnavailableError, toStoreError } from './postgres-errors.js';

describe('generated SQL module', () => {
  it('is up to date with src/postgres/sql/*.sql (run the generator when this fails)', () => {
    const committed = readFileSync(postgresGeneratedModulePath, 'utf8');
    expect(
      committed === renderPostgresSqlModule(),
      'run: npx tsx packages/stores/scripts/generate-postgres-sql.ts',
    ).toBe(true);
  });

  it('numbers migrations 1, 2, ... without gaps', () => {
    expect(migrations.map((migration) => migration.version)).toEqual(migrations.map((_, index) => index + 1));
    expect(migrations[0]?.name).toBe('0001_init');
  });

  it('renders every template with no placeholder left', () => {
    const names = postgresNames('toolfence', 'idempotency_records');
    for (const text of [...Object.values(statements), ...migrations.map((migration) => migration.text)]) {
      expect(renderSql(text, names.placeholders)).not.toMatch(/\{\{|\}\}/);
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

  it('treats connection, shutdown, timeout, resource and read-only errors as unavailable', () => {
    for (const code of ['08006', '57P01', '57014', '53300', '40001', '40P01', '25006', '55P03', 'XX000']) {
      expect(isUnavailableError(serverError(code)), code).toBe(true);
    }
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND']) {
      expect(isUnavailableError(Object.assign(new Error(code), { code })), code).toBe(true);
    }
    expect(isUnavailableError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(
      isUnavailableError(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })])),
    ).toBe(true);
  });

  it('does not disguise a statement the server rejects as unavailability', () => {
    for (const code of ['42601', '42501', '22P02', '23505']) {
      const error = serverError(code);
      expect(isUnavailableError(error), code).toBe(false);
      expect(toStoreError('claim', error, '"s"."t"'), code).toBe(error);
    }
    expect(isUnavailableError(new TypeError('bug'))).toBe(false);
  });

  it('wraps unavailability in StoreUnavailableError with the cause, and names ensureSchema for a missing table', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const wrapped = toStoreError('claim', refused, '"s"."t"');
    expect(StoreUnavailableError.isInstance(wrapped)).toBe(true);
    expect((wrapped as StoreUnavailableError).operation).toBe('claim');
    expect((wrapped as Error).cause).toBe(refused);
    const missing = toStoreError('get', serverError('42P01'), '"s"."t"') as Error;
    expect(StoreUnavailableError.isInstance(missing)).toBe(false);
    expect(missing.message).toMatch(/"s"\."t" does not exist; run `await store\.ensureSchema\(\)`/);
  });
});
