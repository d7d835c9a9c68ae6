// Checks shared by several conformance topics: counting statuses, the holders a loser may
// believe it has, that no non-current holder can change a record, listing every failed check.
import { StoreInputError } from '../../errors/store-input-error.js';
import type {
  ClaimOptions,
  ClaimResult,
  Holder,
  IdempotencyRecord,
  RecordRef,
} from '../../store/idempotency-store.js';
import { equal, fail, ok, same, show } from '../check.js';
import { type CaseContext, DAY_MS, inBatches, LONG_LEASE_MS } from './case-context.js';

export function statusesOf(results: readonly { status: string }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const result of results) counts[result.status] = (counts[result.status] ?? 0) + 1;
  return counts;
}

export function holderOf(result: ClaimResult, options: ClaimOptions): Holder[] {
  // A claimer that did not win may still come back with what it believes: its own owner under
  // the fence it saw or the next one. None of these may be accepted.
  const seen = result.status === 'acquired' ? result.fence : 'record' in result ? result.record.fence : 1;
  return [
    { fence: seen, owner: options.owner },
    { fence: seen + 1, owner: options.owner },
  ];
}

/**
 * Every holder-conditioned operation of a holder that is not the record's current one is refused
 * and changes nothing: replays `holders` (old holders, losers of a race) and two forgeries of the
 * current holder (its owner with the next fence, its fence with another owner).
 */
export async function refusesNonCurrentHolders(
  context: CaseContext,
  ref: RecordRef,
  holders: readonly Holder[],
  label: string,
): Promise<void> {
  const before = await context.store.get(ref);
  const candidates = [...holders];
  if (before !== null) {
    candidates.push(
      { fence: before.fence + 1, owner: before.owner },
      { fence: before.fence, owner: `${before.owner}-forged` },
    );
  }
  const isCurrent = (holder: Holder) =>
    before !== null && holder.fence === before.fence && holder.owner === before.owner;
  const unique = new Map<string, Holder>();
  for (const holder of candidates) {
    if (holder.fence >= 1 && !isCurrent(holder)) unique.set(`${holder.fence}\u0000${holder.owner}`, holder);
  }
  // In batches of `racers`, concurrent within a batch: a race of many bursts leaves hundreds of
  // losers, and firing all their operations at once (times the rounds run at once) queues them
  // behind a small connection pool until they outlast the store's operation timeout.
  await inBatches([...unique.values()], context.racers, async (holder, index) => {
    const on = context.racer(index);
    const what = `${label}: holder ${show(holder)} (record ${show(before && { fence: before.fence, owner: before.owner, state: before.state })})`;
    const renewed = await on.renew(ref, holder, LONG_LEASE_MS);
    equal(renewed.status, 'lost', `${what}: renew`);
    const completed = await on.complete(ref, holder, '"ghost"', DAY_MS);
    ok(completed.status !== 'completed', `${what}: complete was accepted`);
    const marked = await on.markIndeterminate(ref, holder, { type: 'Ghost', message: 'ghost' }, DAY_MS);
    ok(marked.status !== 'marked', `${what}: markIndeterminate was accepted`);
    const released = await on.release(ref, holder);
    ok(released.status !== 'released', `${what}: release was accepted`);
  });
  same(await context.store.get(ref), before, `${label}: the record after refused operations`);
}

/** Runs every check, then fails once listing all that failed (so one run shows every gap). */
export async function everyOf(checks: [string, () => Promise<unknown>][]): Promise<void> {
  const problems: string[] = [];
  for (const [what, check] of checks) {
    try {
      await check();
    } catch (error) {
      problems.push(
        error instanceof Error ? (error.message.split('\n')[0] ?? what) : `${what}: ${show(error)}`,
      );
    }
  }
  if (problems.length > 0) {
    const listed = problems.slice(0, 25).join('\n  ');
    const more = problems.length > 25 ? `\n  … and ${problems.length - 25} more` : '';
    fail(`${problems.length} of ${checks.length} checks failed:\n  ${listed}${more}`);
  }
}

export function checkLeaseExpiredError(record: IdempotencyRecord, label: string): void {
  equal(record.error?.type, 'LeaseExpired', `${label}: error.type`);
  ok(
    typeof record.error?.message === 'string' && record.error.message.length > 0,
    `${label}: error.message must be non-empty text, got ${show(record.error)}`,
  );
}
/** A refusal of bad input: `StoreInputError` (rule S1 of docs/store-contract.md). */
export const isInputError = (error: unknown) => StoreInputError.isInstance(error);
