import { describe, expect, it } from 'vitest';
import {
  assertValidPrefix,
  escapeGlob,
  escapeKey,
  expiryIndexPattern,
  recordNames,
  TENANT_TAG_CACHE_SIZE,
  tenantNames,
  tenantTag,
} from './names.js';

function globMatches(pattern: string, text: string): boolean {
  // Minimal Redis glob (enough for the patterns built here): \x literal, * any run.
  let source = '^';
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index]!;
    if (character === '\\') source += (pattern[++index] ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (character === '*') source += '[\\s\\S]*';
    else if (character === '?') source += '[\\s\\S]';
    else source += character.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`${source}$`).test(text);
}

describe('record names', () => {
  it('digests tenants to 32 hex digits', () => {
    expect(tenantTag('acme')).toMatch(/^[0-9a-f]{32}$/);
    expect(tenantTag('acme')).not.toBe(tenantTag('acme*'));
    expect(tenantTag('*')).toMatch(/^[0-9a-f]{32}$/);
  });

  it('gives a tenant the same digest after its cached digest was evicted', () => {
    const first = tenantTag('tenant-0');
    for (let index = 1; index <= TENANT_TAG_CACHE_SIZE * 2; index++) tenantTag(`tenant-${index}`);
    expect(tenantTag('tenant-0')).toBe(first);
    expect(tenantTag('tenant-0')).toBe(tenantTag('tenant-0'));
  });

  it('passes hex keys unchanged and percent-escapes everything else injectively', () => {
    const hex = 'ab'.repeat(32);
    expect(escapeKey(hex)).toBe(hex);
    expect(escapeKey('a:b{c}*%é')).toBe('a%3Ab%7Bc%7D%2A%25%C3%A9');
    expect(escapeKey('%3A')).not.toBe(escapeKey(':'));
  });

  it("puts a tenant's records, channels, journals and indexes in one hash tag per tenant, under layout v2", () => {
    const tag = tenantTag('acme');
    const names = recordNames('tf', { tenant: 'acme', key: 'k1' });
    expect(names.key).toBe(`tf:v2:r:{${tag}}:k1`);
    expect(names.channel).toBe(`tf:v2:s:{${tag}}:k1`);
    expect(names.journal).toBe(`tf:v2:j:{${tag}}:k1`);
    expect(tenantNames('tf', 'acme')).toEqual({
      index: `tf:v2:i:{${tag}}`,
      expiry: `tf:v2:x:{${tag}}`,
      attention: `tf:v2:a:{${tag}}`,
    });
  });

  it("builds a pattern that matches every tenant's expiry index only, even with a glob-y prefix", () => {
    const prefix = 'app*[1]?';
    expect(escapeGlob(prefix)).toBe('app\\*\\[1\\]\\?');
    const pattern = expiryIndexPattern(prefix);
    expect(globMatches(pattern, tenantNames(prefix, 'acme').expiry)).toBe(true);
    expect(globMatches(pattern, tenantNames(prefix, 'acme').index)).toBe(false);
    expect(globMatches(pattern, tenantNames('appX[1]?', 'acme').expiry)).toBe(false);
    expect(globMatches(pattern, recordNames(prefix, { tenant: 'acme', key: 'k' }).key)).toBe(false);
  });

  it('refuses prefixes that would move the hash tag', () => {
    expect(() => assertValidPrefix('a{b')).toThrow(TypeError);
    expect(() => assertValidPrefix('a}b')).toThrow(TypeError);
    expect(() => assertValidPrefix('')).toThrow(TypeError);
    expect(() => assertValidPrefix('toolfence')).not.toThrow();
  });
});
