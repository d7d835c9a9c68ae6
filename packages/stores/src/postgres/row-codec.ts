// Rows of the records table to and from the contract's shapes (columns as in sql/0001_init.sql
// and sql/0003_outcome_bytes.sql).
import type { IdempotencyRecord, RecordState } from '@toolfence/core';

/** A row as pg returns it. */
export type Row = Record<string, unknown>;

/**
 * How an outcome is written (migration 0003): as text unless it holds NUL, which a PostgreSQL text
 * value cannot; then as its UTF-8 bytes. A well-formed string round-trips through UTF-8 exactly.
 */
export function storedOutcome(outcome: string): { text: string | null; bytes: Buffer | null } {
  return outcome.includes('\u0000')
    ? { text: null, bytes: Buffer.from(outcome, 'utf8') }
    : { text: outcome, bytes: null };
}

/** The outcome of a completed row: `outcome` when set (see 0003_outcome_bytes.sql), else the bytes. */
function readOutcome(row: Row): string | undefined {
  if (row.state !== 'completed') return undefined;
  if (row.outcome !== null && row.outcome !== undefined) return String(row.outcome);
  const bytes = row.outcome_bytes;
  if (Buffer.isBuffer(bytes)) return bytes.toString('utf8');
  return undefined;
}

export function toRecord(row: Row): IdempotencyRecord {
  const record: { -readonly [K in keyof IdempotencyRecord]: IdempotencyRecord[K] } = {
    key: String(row.key),
    tenant: String(row.tenant),
    tool: String(row.tool),
    fingerprint: String(row.fingerprint),
    state: row.state as RecordState,
    fence: Number(row.fence),
    attempt: Number(row.attempt),
    owner: String(row.owner),
    leaseExpiresAtMs: Number(row.lease_expires_at_ms),
    expiresAtMs: Number(row.expires_at_ms),
  };
  const outcome = readOutcome(row);
  if (outcome !== undefined) record.outcome = outcome;
  if (row.error_type !== null && row.error_type !== undefined) {
    record.error = { type: String(row.error_type), message: String(row.error_message ?? '') };
  }
  return record;
}
