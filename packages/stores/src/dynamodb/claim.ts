// DynamoDBStore.claim. The first try is one conditional write that creates the record if the key
// is free (no item, or one past its retention). When it is refused, DynamoDB returns the item
// that refused it (ReturnValuesOnConditionCheckFailure; dynalite: a read), the claim decides on
// that item exactly as MemoryStore decides (packages/core/src/memory/claim.ts), and a
// decision that writes (the holder's resent claim, a takeover, a lapsed lease settled) is one
// conditional write on the version token of the item it decided on. A refusal starts over on the
// item that refused it. No answer comes from a read the decision's write did not check. A claim
// that needs an approval creates an `awaiting_approval` item instead, and one that finds an
// `approved` item consumes it by the same conditional write on its version (approvals.ts).
import type { ClaimOptions, ClaimResult, RecordedError, RecordRef, RecordState } from '@toolfence/core/store';
import { approvalClaimDecision, claimConflicts } from '@toolfence/core/store';
import { consumeItem, requestItem } from './approvals.js';
import { newVersion, type Operation, type RecordsTable } from './backend.js';
import { type Premise, putRecord, type WriteResult } from './conditional-writes.js';
import { contention, settlePending } from './operator-writes.js';
import { isLive, type RecordItem, toRecord } from './record-codec.js';

const MAX_ROUNDS = 16;

// The same texts as the other stores, so a record reads alike on every store.
function leaseExpiredError(attempt: number): RecordedError {
  return {
    type: 'LeaseExpired',
    message: `the lease of attempt ${attempt} expired before its outcome was recorded; the effect may have happened`,
  };
}

function attemptsLostError(attempt: number, maxAttempts: number): RecordedError {
  return {
    type: 'LeaseExpired',
    message: `the lease of attempt ${attempt} expired and ${maxAttempts} attempt(s) were lost`,
  };
}

function callInfo(options: ClaimOptions): Pick<RecordItem, 'runId' | 'callId' | 'description'> {
  return {
    ...(options.runId === undefined ? {} : { runId: options.runId }),
    ...(options.callId === undefined ? {} : { callId: options.callId }),
    ...(options.description === undefined ? {} : { description: options.description }),
  };
}

function newRecord(ref: RecordRef, options: ClaimOptions, now: number): RecordItem {
  const leaseExpiresAtMs = now + options.leaseMs;
  return {
    tenant: ref.tenant,
    key: ref.key,
    tool: options.tool,
    fingerprint: options.fingerprint,
    state: 'in_progress',
    fence: 1,
    attempt: 1,
    owner: options.owner,
    leaseExpiresAtMs,
    expiresAtMs: leaseExpiresAtMs + options.retentionMs,
    retentionMs: options.retentionMs,
    updatedAtMs: now,
    claimedAtMs: now,
    ...callInfo(options),
    ...(options.codec === undefined ? {} : { codec: options.codec }),
    version: newVersion(),
  };
}

/** The answer of a live record that needs no write, or undefined when the claim must write. */
function answerWithoutChange(
  record: RecordItem,
  options: ClaimOptions,
  now: number,
): ClaimResult | undefined {
  const call = record as RecordItem & { state: RecordState };
  if (claimConflicts(call, options)) return { status: 'conflict', record: toRecord(record) };
  // Before its claim: wait for or refuse the operator's decision; an approval is consumed by a write.
  const approval = approvalClaimDecision(call);
  if (approval === 'consume') return undefined;
  if (approval !== undefined) return { status: approval, record: toRecord(record) };
  switch (record.state) {
    case 'completed':
      return { status: 'completed', record: toRecord(record) };
    case 'indeterminate':
      return { status: 'indeterminate', record: toRecord(record) };
    case 'abandoned':
      return { status: 'abandoned', record: toRecord(record) };
    default:
      if (record.owner === options.owner || record.leaseExpiresAtMs <= now) return undefined;
      // Judged live at `now` (the clock before the request that saw the item); the answer's
      // clock is the latest reading that still agrees with that judgment: at most the clock now,
      // so `leaseExpiresAtMs - nowMs` never exceeds a lease another writer set meanwhile (S4).
      return {
        status: 'busy',
        record: toRecord(record),
        nowMs: Math.max(now, Math.min(Date.now(), record.leaseExpiresAtMs - 1)),
      };
  }
}

interface Decision {
  readonly next: RecordItem;
  readonly result: ClaimResult;
}

/**
 * The write a live record needs: an approval consumed, the holder's resent claim, or a lapsed
 * lease.
 */
function decideWrite(record: RecordItem, options: ClaimOptions, now: number): Decision {
  if (record.state === 'approved') return consumeItem(record, options, now);
  if (record.owner === options.owner) {
    const leaseExpiresAtMs = Math.max(record.leaseExpiresAtMs, now + options.leaseMs);
    const expiresAtMs = Math.max(record.expiresAtMs, leaseExpiresAtMs + options.retentionMs);
    return {
      next: { ...record, leaseExpiresAtMs, expiresAtMs, version: newVersion() },
      result: {
        status: 'acquired',
        fence: record.fence,
        attempt: record.attempt,
        leaseExpiresAtMs,
        takeover: record.attempt > 1,
      },
    };
  }
  if (options.mode === 'at-most-once' || record.attempt >= options.maxAttempts) {
    const state = options.mode === 'at-most-once' ? 'indeterminate' : 'abandoned';
    const error =
      state === 'indeterminate'
        ? leaseExpiredError(record.attempt)
        : attemptsLostError(record.attempt, options.maxAttempts);
    const next: RecordItem = {
      ...record,
      state,
      error,
      expiresAtMs: now + options.retentionMs,
      updatedAtMs: now,
      version: newVersion(),
    };
    return { next, result: { status: state, record: toRecord(next) } };
  }
  const leaseExpiresAtMs = now + options.leaseMs;
  const { runId: _runId, callId: _callId, description: _description, ...rest } = record;
  return {
    next: {
      ...rest,
      ...callInfo(options),
      fence: record.fence + 1,
      attempt: record.attempt + 1,
      owner: options.owner,
      leaseExpiresAtMs,
      expiresAtMs: leaseExpiresAtMs + options.retentionMs,
      retentionMs: options.retentionMs,
      claimedAtMs: now,
      updatedAtMs: now,
      version: newVersion(),
    },
    result: {
      status: 'acquired',
      fence: record.fence + 1,
      attempt: record.attempt + 1,
      leaseExpiresAtMs,
      takeover: true,
    },
  };
}

export async function claim(
  table: RecordsTable,
  op: Operation,
  ref: RecordRef,
  options: ClaimOptions,
): Promise<ClaimResult> {
  let now = Date.now();
  let premise: Premise = 'free';
  // A call that needs an approval asks for one on a free key; nothing runs until it is decided.
  const fresh = options.approval === 'required' ? requestItem : newRecord;
  let first = fresh(ref, options, now);
  let written: WriteResult = await putRecord(table, op, first, premise, now);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    if (written.written) {
      if (first.state === 'awaiting_approval') {
        return { status: 'approval_required', record: toRecord(first) };
      }
      return {
        status: 'acquired',
        fence: 1,
        attempt: 1,
        leaseExpiresAtMs: first.leaseExpiresAtMs,
        takeover: false,
      };
    }
    const current = written.current;
    // Decided on the clock before the request that saw `current`: a lease or retention ended by
    // then was ended when DynamoDB checked the item, however late its answer arrives.
    now = written.seenAtMs;
    if (!isLive(current, now)) {
      // The key is free; an item past retention is replaced on its version (after its pending
      // resolution entry, if any, got its own item).
      const expired: RecordItem | undefined = written.current;
      if (expired?.pending !== undefined) {
        await settlePending(table, op, expired);
        const seenAtMs = Date.now();
        written = { written: false, current: await table.read(op, ref), seenAtMs };
        continue;
      }
      premise = expired ?? 'absent';
      first = fresh(ref, options, now);
      written = await putRecord(table, op, first, premise, now);
      continue;
    }
    const answer = answerWithoutChange(current, options, now);
    if (answer !== undefined) return answer;
    const decision = decideWrite(current, options, now);
    const outcome = await putRecord(table, op, decision.next, current, now);
    if (outcome.written) return decision.result;
    written = outcome;
  }
  return contention(op);
}
