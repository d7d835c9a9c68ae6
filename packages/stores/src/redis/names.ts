import { createHash } from 'node:crypto';
import type { RecordRef } from '@toolfence/core/store';

/** Redis key of a record and the channel its settlement is announced on. */
export interface RecordNames {
  readonly key: string;
  readonly channel: string;
  /** The key's resolution journal. */
  readonly journal: string;
}

/**
 * A tenant as it appears in Redis names: 32 hex digits of its SHA-256. Fixed length and hex
 * only, so no tenant name can inject a glob character, a separator or a hash-tag brace, and no
 * tenant's pattern can match another tenant's keys.
 */
export function tenantTag(tenant: string): string {
  const cached = tenantTags.get(tenant);
  if (cached !== undefined) return cached;
  const tag = createHash('sha256').update(tenant, 'utf8').digest('hex').slice(0, 32);
  // Bounded: tenants may come from requests. The oldest entry goes first (Map keeps insertion order).
  if (tenantTags.size >= TENANT_TAG_CACHE_SIZE) tenantTags.delete(tenantTags.keys().next().value as string);
  tenantTags.set(tenant, tag);
  return tag;
}

/** Tenants whose digest is kept: every call names its tenant, and a SHA-256 per call shows. */
export const TENANT_TAG_CACHE_SIZE = 256;
const tenantTags = new Map<string, string>();

/**
 * Percent-escapes every character of a key outside `[0-9A-Za-z_.-]` (its UTF-8 bytes), so `{`,
 * `}`, `:`, `*` and `%` never appear raw. Keys are normally lowercase hex and pass unchanged.
 */
export function escapeKey(key: string): string {
  return key.replace(/[^0-9A-Za-z_.-]/gu, (character) =>
    Array.from(
      Buffer.from(character, 'utf8'),
      (byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    ).join(''),
  );
}

/** Escapes the characters SCAN's MATCH treats as glob syntax. */
export function escapeGlob(text: string): string {
  return text.replace(/[\\*?[\]]/g, '\\$&');
}

/**
 * Version of the key layout, part of every name: records written under another layout are not
 * found (docs/redis.md, "Upgrading": drain before you upgrade).
 */
export const KEY_LAYOUT = 'v2';

/**
 * `<prefix>:v2:r:{<tenantTag>}:<escapedKey>` and `<prefix>:v2:s:{<tenantTag>}:<escapedKey>`. The
 * braces are a Redis Cluster hash tag per TENANT: a tenant's records, channels, listing indexes
 * and resolution journals hash to one slot, so a script can keep the index with the record.
 */
export function recordNames(prefix: string, ref: RecordRef): RecordNames {
  const tag = tenantTag(ref.tenant);
  const key = escapeKey(ref.key);
  return {
    key: `${prefix}:${KEY_LAYOUT}:r:{${tag}}:${key}`,
    channel: `${prefix}:${KEY_LAYOUT}:s:{${tag}}:${key}`,
    journal: `${prefix}:${KEY_LAYOUT}:j:{${tag}}:${key}`,
  };
}

/**
 * A tenant's listing, expiry and attention indexes (see statements/includes/01-record.lua); the scripts
 * are given the first two and derive the third.
 */
export function tenantNames(
  prefix: string,
  tenant: string,
): { index: string; expiry: string; attention: string } {
  const tag = tenantTag(tenant);
  return {
    index: `${prefix}:${KEY_LAYOUT}:i:{${tag}}`,
    expiry: `${prefix}:${KEY_LAYOUT}:x:{${tag}}`,
    attention: `${prefix}:${KEY_LAYOUT}:a:{${tag}}`,
  };
}

/** The SCAN MATCH pattern of every tenant's expiry index (listing every tenant: operators only). */
export function expiryIndexPattern(prefix: string): string {
  return `${escapeGlob(prefix)}:${KEY_LAYOUT}:x:{*}`;
}

/**
 * The SCAN MATCH pattern of a tenant's record keys, or of every tenant's (`tenant` undefined):
 * the native claims' indexing pass (native-index.ts), operators only.
 */
export function recordKeyPattern(prefix: string, tenant?: string): string {
  const tag = tenant === undefined ? '*' : tenantTag(tenant);
  return `${escapeGlob(prefix)}:${KEY_LAYOUT}:r:{${tag}}:*`;
}

/** The tenant digest (hash tag) of a record key, or undefined when the name is not one. */
export function tagOfRecordKey(key: string): string | undefined {
  return /:r:\{([0-9a-f]{32})\}:/.exec(key)?.[1];
}

/** The listing index that goes with an expiry index name. */
export function indexOfExpiry(expiry: string): string {
  return expiry.replace(/:x:\{([0-9a-f]{32})\}$/, ':i:{$1}');
}

/** Throws a TypeError unless `prefix` is usable in Redis names. */
export function assertValidPrefix(prefix: string): void {
  if (prefix.length === 0 || /[{}]/.test(prefix)) {
    throw new TypeError(
      `RedisStore prefix must be non-empty and contain no "{" or "}" (they would move the hash tag); got ${JSON.stringify(prefix)}`,
    );
  }
}
