// The holder's operations (renew, complete, release, markIndeterminate): each one statement that
// changes the row only where it matches the holder (fence AND owner; only then is the row locked)
// and answers a refused holder from a plain read (statements/<operation>.sql). When that statement
// answers `ambiguous` (the change lost a race to a concurrent writer, see
// statements/fragments/row-seen.sql), the locking statement statements/<operation>-locked.sql decides instead.
import type * as contract from '@toolfence/core/store';
import type { StatementRunner } from './backend.js';
import { type Row, storedOutcome, toRecord } from './record-codec.js';

function holderValues(ref: contract.RecordRef, holder: contract.Holder): unknown[] {
  return [ref.tenant, ref.key, holder.fence, holder.owner];
}

type HolderOperation = 'renew' | 'complete' | 'release' | 'markIndeterminate';

const lockedStatement = {
  renew: 'renewLocked',
  complete: 'completeLocked',
  release: 'releaseLocked',
  markIndeterminate: 'markIndeterminateLocked',
} as const satisfies Record<HolderOperation, keyof StatementRunner['sql']>;

/**
 * The operation's holder-matching statement; when it answers `ambiguous`, the locking statement
 * with the same values (its row has no `ambiguous`). Each round trip has its own operationTimeoutMs.
 */
async function holderStatement(
  runner: StatementRunner,
  operation: HolderOperation,
  values: unknown[],
): Promise<Row | undefined> {
  const row = await runner.queryOne(operation, runner.sql[operation], values);
  if (row?.ambiguous !== true) return row;
  return runner.queryOne(operation, runner.sql[lockedStatement[operation]], values);
}

/** `not_found`, the done status when the statement changed the row, else `stale` with the row. */
function changedOr<Done extends string>(
  row: Row | undefined,
  done: Done,
): { status: 'not_found' } | { status: Done } | { status: 'stale'; record: ReturnType<typeof toRecord> } {
  if (row === undefined) return { status: 'not_found' };
  return row.changed === true ? { status: done } : { status: 'stale', record: toRecord(row) };
}

export async function renewLease(
  runner: StatementRunner,
  ref: contract.RecordRef,
  holder: contract.Holder,
  leaseMs: number,
): Promise<contract.RenewResult> {
  const row = await holderStatement(runner, 'renew', [...holderValues(ref, holder), leaseMs]);
  if (row === undefined) return { status: 'lost', reason: 'not_found' };
  if (row.renewed_lease_ms !== null && row.renewed_lease_ms !== undefined) {
    return { status: 'renewed', leaseExpiresAtMs: Number(row.renewed_lease_ms) };
  }
  if (Number(row.fence) !== holder.fence || row.owner !== holder.owner) {
    return { status: 'lost', reason: 'stale' };
  }
  return { status: 'lost', reason: 'settled' };
}

export async function completeRecord(
  runner: StatementRunner,
  ref: contract.RecordRef,
  holder: contract.Holder,
  outcome: string,
  retentionMs: number,
): Promise<contract.CompleteResult> {
  const stored = storedOutcome(outcome);
  const row = await holderStatement(runner, 'complete', [
    ...holderValues(ref, holder),
    stored.text,
    retentionMs,
    stored.bytes,
  ]);
  return changedOr(row, 'completed');
}

export async function releaseRecord(
  runner: StatementRunner,
  ref: contract.RecordRef,
  holder: contract.Holder,
): Promise<contract.ReleaseResult> {
  const row = await holderStatement(runner, 'release', holderValues(ref, holder));
  return changedOr(row, 'released');
}

export async function markRecordIndeterminate(
  runner: StatementRunner,
  ref: contract.RecordRef,
  holder: contract.Holder,
  error: contract.RecordedError,
  retentionMs: number,
): Promise<contract.MarkIndeterminateResult> {
  const row = await holderStatement(runner, 'markIndeterminate', [
    ...holderValues(ref, holder),
    error.type,
    error.message,
    retentionMs,
  ]);
  return changedOr(row, 'marked');
}
