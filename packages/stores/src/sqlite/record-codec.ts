// Rows of the records table (migrations/0001_init.sql, migrations/0002_listing.sql) and the contract's records.
import type { Holder, IdempotencyRecord, RecordRef, RecordState } from '@toolfence/core';
import { type OperatorColumns, operatorFieldsOf } from './operator-columns.js';

export interface RecordRow extends OperatorColumns {
  tenant: string;
  key: string;
  tool: string;
  fingerprint: string;
  state: RecordState;
  fence: number;
  attempt: number;
  owner: string;
  lease_expires_at_ms: number;
  expires_at_ms: number;
  retention_ms: number;
  outcome: string | null;
  error_type: string | null;
  error_message: string | null;
}

/** The key of a record among this process's waiters. */
export function recordId(ref: RecordRef): string {
  // NUL is refused in names, so tenant and key never run together ambiguously.
  return `${ref.tenant}\u0000${ref.key}`;
}

export function isHolder(row: RecordRow, holder: Holder): boolean {
  return row.fence === holder.fence && row.owner === holder.owner;
}

export function toRecord(row: RecordRow): IdempotencyRecord {
  const record: { -readonly [K in keyof IdempotencyRecord]: IdempotencyRecord[K] } = {
    key: row.key,
    tenant: row.tenant,
    tool: row.tool,
    fingerprint: row.fingerprint,
    state: row.state,
    fence: row.fence,
    attempt: row.attempt,
    owner: row.owner,
    leaseExpiresAtMs: row.lease_expires_at_ms,
    expiresAtMs: row.expires_at_ms,
    retentionMs: row.retention_ms,
  };
  if (row.outcome !== null) record.outcome = row.outcome;
  if (row.error_type !== null) record.error = { type: row.error_type, message: row.error_message ?? '' };
  return { ...record, ...operatorFieldsOf(row) };
}
