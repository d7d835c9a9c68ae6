// The deliberately broken stores the conformance suite must catch: each is MapStore with one bug
// a store author really writes (most were seen in stores reviewed for this project, or are the
// Redis/SQL shape of a MemoryStore mistake).
import type { Bug } from './map-store.js';

export interface Mutant {
  readonly bug: Bug;
  /** What the author wrote, in one line. */
  readonly description: string;
  /** Start of the name of the case meant to catch it (it must be among the cases that do). */
  readonly caughtBy: string;
}

export const mutants: readonly Mutant[] = [
  {
    bug: 'claim-read-await-write',
    description: 'a first claim reads "no record", awaits, then writes (GET then SET)',
    caughtBy: '50 concurrent claims',
  },
  {
    bug: 'takeover-read-await-write',
    description: 'an expired-lease takeover reads, awaits, then writes fence + 1',
    caughtBy: 'race: N claimers take over',
  },
  {
    bug: 'mark-expired-read-await-write',
    description: 'an at-most-once claim reads the expired lease, awaits, then marks it indeterminate',
    caughtBy: 'race: at-least-once and at-most-once',
  },
  {
    bug: 'complete-read-await-write',
    description: 'complete checks the holder, awaits, then writes the outcome',
    caughtBy: 'race: complete of the expired holder',
  },
  {
    bug: 'renew-read-await-write',
    description: 'renew checks the holder, awaits, then writes the new lease',
    caughtBy: 'race: renew of the expired holder',
  },
  {
    bug: 'release-read-await-write',
    description: 'release checks the holder, awaits, then deletes the key',
    caughtBy: 'race: release of the expired holder',
  },
  {
    bug: 'mark-read-await-write',
    description: 'markIndeterminate checks the holder, awaits, then writes',
    caughtBy: 'race: markIndeterminate of the expired holder',
  },
  {
    bug: 'resolve-read-await-write',
    description: 'resolve checks the state, awaits, then writes',
    caughtBy: 'race: two operators',
  },
  {
    bug: 'complete-unfenced',
    description: 'complete records any outcome, whoever sends it',
    caughtBy: 'complete with a superseded fence',
  },
  {
    bug: 'holder-fence-only',
    description: 'holder check compares the fence only (a released-and-reclaimed key restarts at fence 1)',
    caughtBy: 'the same fence from an earlier life',
  },
  {
    bug: 'holder-owner-only',
    description: 'holder check compares the owner only ("owners are unique anyway")',
    caughtBy: 'the current owner with another fence',
  },
  {
    bug: 'renew-unchecked',
    description: 'renew extends any in_progress lease, so it is accepted after a takeover',
    caughtBy: 'renew extends a live lease',
  },
  {
    bug: 'release-unchecked',
    description: 'release deletes any in_progress record without a holder check',
    caughtBy: 'release frees the key',
  },
  {
    bug: 'resolve-in-progress',
    description: 'resolve also settles a live in_progress record',
    caughtBy: 'markIndeterminate keeps the claim',
  },
  {
    bug: 'resolve-refuses-expired',
    description:
      'resolve refuses every in_progress record, also one whose holder is gone (issue #27, item 3)',
    caughtBy: 'an in_progress record whose lease expired',
  },
  {
    bug: 'resolve-forced-unmarked',
    description: 'a forced resolution of a live holder is not marked forced in its entry',
    caughtBy: 'resolve of an in_progress record whose lease is live',
  },
  {
    bug: 'resolve-expect-fence-only',
    description: "resolve's expected holder is compared by fence only (a new life starts at fence 1 again)",
    caughtBy: 'resolve with the holder of an earlier life',
  },
  {
    bug: 'resolve-ignores-expect',
    description: 'resolve ignores the expected holder and settles whatever record is under the key',
    caughtBy: 'resolve with a superseded fence',
  },
  {
    bug: 'retention-from-claim',
    description: 'a settled record expires retentionMs after the claim, not after the settle',
    caughtBy: 'S3: a settled record',
  },
  {
    bug: 'retention-in-seconds',
    description: 'retention deadlines kept in whole seconds (EXPIRE instead of PEXPIRE)',
    caughtBy: 'S3: an in_progress record',
  },
  {
    bug: 'renew-keeps-retention',
    description: 'renew moves the lease but not the retention deadline',
    caughtBy: 'S3: an in_progress record',
  },
  {
    bug: 'worker-clock',
    description: "deadlines computed on the worker's clock, judged by the store's",
    caughtBy: 'a claim of a busy key reports the holder and the store clock',
  },
  {
    bug: 'wait-misses-release',
    description: 'waitForSettle is not woken by release (no notification sent)',
    caughtBy: 'waitForSettle wakes on release',
  },
  {
    bug: 'wait-fires-early',
    description: "waitForSettle trusts a timer set early (half the wait) instead of the store's clock",
    caughtBy: 'S6',
  },
  {
    bug: 'forget-prefix',
    description: 'forget matches tenants by prefix (SCAN MATCH tenant*)',
    caughtBy: 'forget treats a tenant name literally',
  },
  {
    bug: 'conflict-ignores-fingerprint',
    description: 'the conflict check compares the tool only',
    caughtBy: 'another tool, or another fingerprint',
  },
  {
    bug: 'answers-when-down',
    description: 'get / forget / waitForSettle answer null / 0 / settled when the backend is down',
    caughtBy: 'S7',
  },
  {
    bug: 'takeover-keeps-attempt',
    description: 'a takeover raises the fence but not the attempt',
    caughtBy: 'an expired lease is taken over at-least-once',
  },
  {
    bug: 'max-attempts-off-by-one',
    description: 'abandons only when attempt > maxAttempts',
    caughtBy: 'maxAttempts lost attempts',
  },
  {
    bug: 'complete-overwrites-completed',
    description: 'a second complete by the holder overwrites the recorded outcome',
    caughtBy: 'a replay after complete',
  },
  {
    bug: 'resend-busy',
    description: "the holder's own resent claim (reply lost) is answered busy",
    caughtBy: 'a claim resent by its own owner',
  },
  {
    bug: 'input-unchecked',
    description: 'no input checks: bad names, durations and outcomes are written',
    caughtBy: 'S1: a claim with any bad field',
  },
  {
    bug: 'nul-truncates-outcome',
    description: 'an outcome is cut at its first NUL (C-string driver)',
    caughtBy: 'S2',
  },
  {
    bug: 'lone-surrogate-replaced',
    description: 'a lone surrogate is replaced by U+FFFD instead of refused',
    caughtBy: 'S2',
  },
  {
    bug: 'outcome-limit-1mib',
    description: 'outcomes over 1 MiB are refused (the contract says 16 Mi)',
    caughtBy: 'S1: the largest accepted',
  },
  {
    bug: 'at-most-once-takes-over',
    description: 'an at-most-once claim takes over an expired lease instead of marking it',
    caughtBy: 'an expired lease becomes indeterminate at-most-once',
  },
  {
    bug: 'list-returns-outcome',
    description: 'list returns whole records, outcomes included',
    caughtBy: 'list: a completed record is listed without its outcome',
  },
  {
    bug: 'release-drops-resolution',
    description: 'a released resolution deletes the record and its resolution entry with it',
    caughtBy: 'resolutions: who and why are kept',
  },
  {
    bug: 'approval-consume-read-await-write',
    description: 'a claim reads "approved", awaits, then writes its claim (the approval used twice)',
    caughtBy: 'race: N claims of one approved call',
  },
  {
    bug: 'approval-ignores-fingerprint',
    description: 'a claim of an approved key checks the fingerprint only when checkFingerprint says so',
    caughtBy: 'approval: another tool or fingerprint',
  },
  {
    bug: 'denial-overridable',
    description: 'the latest decision wins: an approval overwrites a denial',
    caughtBy: 'approval: a denial stays a denial',
  },
];
