// What the race cases share: the racers' claim options, issuing an operation amid the claims,
// the winner and the losers of a round.
import type { ClaimOptions, ClaimResult, Holder, RecordRef } from '../../store/idempotency-store.js';
import { holderOf, refusesNonCurrentHolders } from './case-checks.js';
import { type Acquired, type CaseContext, sleep } from './case-context.js';

export const raceTimeoutMs = 60_000;

/** The racers' claim options, and where in the batch the extra operation goes. */
export const claimers = (c: CaseContext, overrides: (index: number) => Partial<ClaimOptions> = () => ({})) =>
  Array.from({ length: c.racers }, (_, index) => c.options(overrides(index)));

/** Issues `extra` and the claims at once; `extra` first in even rounds, in the middle in odd ones. */
export async function raceWith<T>(
  c: CaseContext,
  round: number,
  ref: RecordRef,
  claimOptions: ClaimOptions[],
  extra: () => Promise<T>,
): Promise<{ extra: T; claims: ClaimResult[] }> {
  const at = round % 2 === 0 ? 0 : Math.floor(claimOptions.length / 2);
  const work: (() => Promise<unknown>)[] = claimOptions.map(
    (opts, index) => () => c.racer(index + 1).claim(ref, opts),
  );
  work.splice(at, 0, extra);
  // Issued in this order, all before any reply is awaited.
  const results = await Promise.all(work.map((start) => start()));
  const [extraResult] = results.splice(at, 1);
  return { extra: extraResult as T, claims: results as ClaimResult[] };
}

export function winnerOf(claims: ClaimResult[], claimOptions: ClaimOptions[]) {
  const index = claims.findIndex((claim) => claim.status === 'acquired');
  return index < 0
    ? undefined
    : { result: claims[index] as Acquired, options: claimOptions[index] as ClaimOptions, index };
}

export const losersOf = (claims: ClaimResult[], claimOptions: ClaimOptions[], winner?: number) =>
  claims.flatMap((claim, index) =>
    index === winner ? [] : holderOf(claim, claimOptions[index] as ClaimOptions),
  );

/** A fresh key whose first holder's lease has certainly expired, and the racers' claim options. */
export async function expiredLease(c: CaseContext) {
  const ref = c.ref();
  const first = await c.acquire(ref, { leaseMs: c.leaseMs });
  await sleep(c.expireMs);
  return { ref, first, opts: claimers(c) };
}

/** After a round: `holders` and every loser of `claims` can change nothing (refusesNonCurrentHolders). */
export function refusesAllBut(
  c: CaseContext,
  ref: RecordRef,
  holders: readonly Holder[],
  claims: ClaimResult[],
  claimOptions: ClaimOptions[],
  winner: number | undefined,
  round: number,
): Promise<void> {
  return refusesNonCurrentHolders(
    c,
    ref,
    [...holders, ...losersOf(claims, claimOptions, winner)],
    `round ${round}`,
  );
}
