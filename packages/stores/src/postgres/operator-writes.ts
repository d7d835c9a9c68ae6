// Operating on records by key or tenant, not as their holder: resolve (the operator; its
// resolution entry is journaled by the same statement), decideApproval (an operator's decision
// on one call), forget (a tenant's records and resolutions) and cleanup (records and resolution
// entries past retention).
import type {
  ApprovalDecision,
  DecideResult,
  RecordRef,
  Resolution,
  ResolveResult,
} from '@toolfence/core/store';
import { isApprovalState, resolutionApplies } from '@toolfence/core/store';
import type { StatementRunner } from './backend.js';
import { type Row, storedOutcome, toRecord } from './record-codec.js';

export async function resolveRecord(
  runner: StatementRunner,
  ref: RecordRef,
  resolution: Resolution,
  retentionMs: number,
): Promise<ResolveResult> {
  let row: Row | undefined;
  if ('outcome' in resolution) {
    const stored = storedOutcome(resolution.outcome);
    row = await runner.queryOne('resolve', runner.sql.resolveCompleted, [
      ref.tenant,
      ref.key,
      stored.text,
      retentionMs,
      stored.bytes,
      resolution.by ?? null, // the audit, kept in the resolution entry
      resolution.reason ?? null,
      resolution.expect?.fence ?? null, // the holder the operator saw (NULL: any holder)
      resolution.expect?.owner ?? null,
      resolution.force === true, // settle even a live holder
    ]);
  } else {
    row = await runner.queryOne('resolve', runner.sql.resolveReleased, [
      ref.tenant,
      ref.key,
      retentionMs,
      resolution.by ?? null,
      resolution.reason ?? null,
      resolution.expect?.fence ?? null,
      resolution.expect?.owner ?? null,
      resolution.force === true,
    ]);
  }
  if (row === undefined) return { status: 'not_found' };
  if (row.changed === true) return { status: 'resolved' };
  // The row is the record the statement locked and decided on: judge why it did not change. With
  // the expected holder, only a completed record or a live holder (not forced) is left unchanged.
  const record = toRecord(row);
  if (!resolutionApplies(record, resolution)) return { status: 'changed', record };
  return record.state === 'in_progress'
    ? { status: 'holder_alive', record }
    : { status: 'not_resolvable', record };
}

/**
 * An operator's decision (statements/decide.sql, or decide-expected.sql with `expect`): one
 * statement decides under the row lock; the answer is judged from the record it left, which the
 * statement changed only where docs/store-contract.md's table says so.
 */
export async function decideRecord(
  runner: StatementRunner,
  ref: RecordRef,
  decision: ApprovalDecision,
  retentionMs: number,
): Promise<DecideResult> {
  const parameters: unknown[] = [
    ref.tenant,
    ref.key,
    decision.tool,
    decision.fingerprint,
    decision.approved,
    decision.by ?? null,
    decision.reason ?? null,
    retentionMs,
    decision.runId ?? null,
    decision.callId ?? null,
    decision.description ?? null,
    decision.codec ?? null,
  ];
  const row =
    decision.expect === undefined
      ? await runner.queryOne('decideApproval', runner.sql.decide, parameters)
      : await runner.queryOne('decideApproval', runner.sql.decideExpected, [
          ...parameters.slice(0, 8),
          decision.expect.owner,
        ]);
  if (row === undefined) return { status: 'not_found' };
  const record = toRecord(row);
  if (record.tool !== decision.tool || record.fingerprint !== decision.fingerprint) {
    return { status: 'conflict', record };
  }
  if (!isApprovalState(record.state)) return { status: 'consumed', record };
  if (decision.expect !== undefined && decision.expect.owner !== record.owner) {
    return { status: 'changed', record };
  }
  // A write always leaves the decided state, so an approval that left `denied` met a denial.
  if (decision.approved && record.state === 'denied') return { status: 'denied', record };
  return { status: 'decided', record };
}

export async function forgetTenant(runner: StatementRunner, tenant: string): Promise<number> {
  const row = await runner.queryOne('forget', runner.sql.forget, [tenant]);
  return Number(row?.erased ?? 0);
}

/** Deletes at most `limit` expired rows, records first, then resolution entries (statements/cleanup.sql). */
export async function deleteExpired(runner: StatementRunner, limit: number): Promise<number> {
  const row = await runner.queryOne('cleanup', runner.sql.cleanup, [limit]);
  return Number(row?.deleted ?? 0);
}
