// The MemoryStore's records as it keeps them (every field present, for one hidden class) and as
// callers see them (snapshots), new records, and the resolution entry of a record.
import type {
  ClaimOptions,
  Holder,
  IdempotencyRecord,
  RecordRef,
  Resolution,
  ResolutionEntry,
} from '../store/idempotency-store.js';
import { overridesLiveHolder } from '../store/store-input.js';

type VisibleRecord = { -readonly [K in keyof IdempotencyRecord]: IdempotencyRecord[K] };

/**
 * A record as the MemoryStore keeps it: every field present, `undefined` when absent (made by
 * {@link newRecord}, never `delete`d), so every record has one hidden class and the code that
 * reads them stays monomorphic; {@link snapshot} leaves the absent ones out.
 */
export type MutableRecord = VisibleRecord & {
  /** Retention window of the claim, so a renewal keeps the record a full window past its lease. */
  retentionMs: number;
};

export function recordId(ref: RecordRef): string {
  // NUL cannot appear in a hex key, so tenant and key never run together ambiguously.
  return `${ref.key}\u0000${ref.tenant}`;
}

export function isHolder(record: MutableRecord, holder: Holder): boolean {
  return record.fence === holder.fence && record.owner === holder.owner;
}

/**
 * The record as callers see it (a copy without the store's own fields; absent fields stay
 * absent). Field by field: a rest copy (`{ retentionMs, ...visible }`) took V8's slow path,
 * ~5 % of a repeat's CPU (bench/RESULTS.md).
 */
export function snapshot(record: MutableRecord): IdempotencyRecord {
  const visible: VisibleRecord = {
    key: record.key,
    tenant: record.tenant,
    tool: record.tool,
    fingerprint: record.fingerprint,
    state: record.state,
    fence: record.fence,
    attempt: record.attempt,
    owner: record.owner,
    leaseExpiresAtMs: record.leaseExpiresAtMs,
    expiresAtMs: record.expiresAtMs,
    retentionMs: record.retentionMs,
  };
  copyOptional(record, visible);
  return visible;
}

/** The fields `snapshot` copies: a field added to IdempotencyRecord fails to compile here. */
type CopiedField =
  | 'key'
  | 'tenant'
  | 'tool'
  | 'fingerprint'
  | 'state'
  | 'fence'
  | 'attempt'
  | 'owner'
  | 'leaseExpiresAtMs'
  | 'expiresAtMs'
  | 'retentionMs'
  | 'codec'
  | 'outcome'
  | 'error'
  | 'runId'
  | 'callId'
  | 'description'
  | 'claimedAtMs'
  | 'updatedAtMs'
  | 'resolution'
  | 'approval';
const everyFieldCopied: Exclude<keyof IdempotencyRecord, CopiedField> extends never ? true : never = true;
void everyFieldCopied;

function copyOptional(from: MutableRecord, to: VisibleRecord): void {
  if (from.outcome !== undefined) to.outcome = from.outcome;
  if (from.error !== undefined) to.error = from.error;
  if (from.runId !== undefined) to.runId = from.runId;
  if (from.callId !== undefined) to.callId = from.callId;
  if (from.description !== undefined) to.description = from.description;
  if (from.claimedAtMs !== undefined) to.claimedAtMs = from.claimedAtMs;
  if (from.updatedAtMs !== undefined) to.updatedAtMs = from.updatedAtMs;
  if (from.resolution !== undefined) to.resolution = from.resolution;
  if (from.codec !== undefined) to.codec = from.codec;
  if (from.approval !== undefined) to.approval = from.approval;
}

/** The record a first claim creates: attempt 1 under fence 1, in progress from `now`. */
export function newRecord(ref: RecordRef, options: ClaimOptions, now: number): MutableRecord {
  return {
    key: ref.key,
    tenant: ref.tenant,
    tool: options.tool,
    fingerprint: options.fingerprint,
    state: 'in_progress',
    fence: 1,
    attempt: 1,
    owner: options.owner,
    leaseExpiresAtMs: now + options.leaseMs,
    expiresAtMs: now + options.leaseMs + options.retentionMs,
    outcome: undefined,
    error: undefined,
    // For operators (absent when the claim has none).
    runId: options.runId,
    callId: options.callId,
    description: options.description,
    claimedAtMs: now,
    updatedAtMs: now,
    resolution: undefined,
    codec: options.codec,
    approval: undefined,
    retentionMs: options.retentionMs,
  };
}

/** The journal entry of an operator resolution of `record` (still in its unresolved state). */
export function resolutionEntry(record: MutableRecord, resolution: Resolution, now: number): ResolutionEntry {
  const entry: { -readonly [K in keyof ResolutionEntry]: ResolutionEntry[K] } = {
    key: record.key,
    tenant: record.tenant,
    tool: record.tool,
    action: 'outcome' in resolution ? 'completed' : 'released',
    fromState: record.state as ResolutionEntry['fromState'],
    fence: record.fence,
    attempt: record.attempt,
    atMs: now,
  };
  if (record.error !== undefined) entry.error = { ...record.error };
  if (resolution.by !== undefined) entry.by = resolution.by;
  if (resolution.reason !== undefined) entry.reason = resolution.reason;
  if (overridesLiveHolder(record, now)) entry.forced = true;
  return entry;
}
